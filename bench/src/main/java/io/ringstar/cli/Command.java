package io.ringstar.cli;

import io.ringstar.DistributedConfig;
import java.io.PrintStream;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;

/**
 * One sub-command of {@code ringstar.jar}, such as {@code bench}: a class annotated with picocli's
 * {@code @Command}, whose flags picocli fills in before {@link Main} calls {@link #run}. Help, unknown
 * flags and malformed values are picocli's to report; {@link #run} checks what the flags mean, and
 * only wires: it hands the checked settings to the application ({@code io.ringstar.bench},
 * {@code io.ringstar.train}, {@code io.ringstar.cli.launch}) and prints what comes back.
 */
public interface Command {

    /**
     * Adds the options that are declared in code rather than by annotations (those that come from
     * core's or a transport's list of options), before any command line is parsed.
     */
    default void declareOptions(CommandSpec spec) {
    }

    /**
     * Checks the flags picocli parsed and the environment as {@link #run} would, without starting,
     * connecting or reading anything else: what the launcher asks of its ranks' command line before
     * it starts them. The default checks nothing.
     *
     * @throws UsageException for what {@link #run} would refuse as a usage error
     */
    default void check() throws UsageException {
    }

    /**
     * The configuration of the rank this command would run, from its flags and environment as
     * {@link #run} reads them, without starting, connecting or reading anything else; empty for a
     * command that runs no ranks (the default). The launcher reads its ranks' trace directory and
     * job id from it.
     *
     * @throws UsageException for what {@link #run} would refuse as a usage error
     */
    default Optional<DistributedConfig> rankConfig() throws UsageException {
        return Optional.empty();
    }

    /**
     * Runs the command with the flags picocli parsed into it. A {@code RankFailureException} or any
     * other exception it throws is reported by {@link Main} (one line per failed rank) with status 1.
     *
     * @return the process's exit status: 0 for success, 1 for a failed or wrong run
     * @throws UsageException for a value or combination of flags that makes no sense; the process
     *     exits with status 2
     */
    int run(PrintStream out, PrintStream err) throws UsageException;
}
