package io.ringstar.cli.report;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code ringstar report}: the benchmark scripts' tables from their result files, one subcommand per
 * job ({@code benchmarks}, {@code compare-mpi}, {@code cluster}, and {@code merge} and {@code wrong}
 * for the CSV files the scripts assemble), and from the ranks' trace dumps where a job hung
 * ({@code hang}) and its timeline as a Chrome trace ({@code timeline}). Reads files only; measures
 * nothing. Exit status 0 done, 1 a file is missing or malformed (the message names it and the line)
 * or a checked row is wrong, 2 a usage error.
 */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = {"Tables, ratios and crossing points of the benchmark scripts' result files, in Markdown;",
            "and, from the ranks' trace dumps, where a job hung (hang) and a Chrome trace (timeline)."},
        subcommands = {BenchmarksReportCommand.class, CompareMpiReportCommand.class, ClusterReportCommand.class,
            MergeCommand.class, WrongRowsCommand.class, HangReportCommand.class, TimelineCommand.class},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:done", "1:a file is missing or malformed, or has wrong rows (wrong)", "2:usage error"})
public final class ReportCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    /** Without a subcommand: the usage, and a usage error. */
    @Override
    public Integer call() {
        spec.commandLine().getErr().println("ringstar report: which report? One of: "
                + String.join(", ", spec.subcommands().keySet()));
        spec.commandLine().usage(spec.commandLine().getErr());
        return CommandLine.ExitCode.USAGE;
    }
}
