package io.ringstar.cli;

import java.io.PrintStream;
import picocli.CommandLine.Model.CommandSpec;

/**
 * One sub-command of {@code ringstar.jar}, such as {@code bench}: a class annotated with picocli's
 * {@code @Command}, whose flags picocli fills in before {@link Main} calls {@link #run}. Help, unknown
 * flags and malformed values are picocli's to report; {@link #run} checks what the flags mean.
 */
public interface Command {

    /**
     * Adds the options that are declared in code rather than by annotations (those that come from
     * core's or a transport's list of options), before any command line is parsed.
     */
    default void declareOptions(CommandSpec spec) {
    }

    /**
     * Runs the command with the flags picocli parsed into it.
     *
     * @return the process's exit status: 0 for success, 1 for a failed or wrong run
     * @throws UsageException for a value or combination of flags that makes no sense; the process
     *     exits with status 2
     */
    int run(PrintStream out, PrintStream err) throws UsageException;
}
