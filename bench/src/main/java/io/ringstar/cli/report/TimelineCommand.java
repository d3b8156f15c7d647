package io.ringstar.cli.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ringstar report timeline DIR --out FILE.json}: the trace dumps of DIR as one Chrome trace
 * ({@link Timeline}) for Perfetto or chrome://tracing, a process per rank on a common wall-clock
 * axis. The file is replaced only once complete. Files that are not readable dumps are named on
 * stderr and left out. Exit status 0 when written, 1 when DIR is missing or holds no readable dump.
 */
@Command(name = "timeline", mixinStandardHelpOptions = true,
        description = "The trace dumps (*.json) in DIR as one Chrome trace (Trace Event Format) for Perfetto or "
                + "chrome://tracing: a process per rank, a slice per call, on the ranks' wall clocks.",
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:written (unreadable files are named on stderr and left out)",
            "1:DIR is missing, holds no readable dump, or FILE cannot be written", "2:usage error"})
public final class TimelineCommand extends ReportJob {
    @Parameters(paramLabel = "DIR", description = "the directory the ranks dumped their traces into")
    private Path dir;

    @Option(names = "--out", required = true, paramLabel = "FILE.json", description = "the trace to write (replaced)")
    private Path out;

    @Override
    int report() throws IOException {
        TraceDumps dumps = TraceDumps.read(dir);
        if (!dumps.reportSkipped(err(), "ringstar report " + spec.name(), dir)) {
            return 1;
        }
        Path partial = out.resolveSibling(out.getFileName() + ".tmp");
        Files.writeString(partial, Timeline.render(dumps), StandardCharsets.UTF_8);
        Files.move(partial, out, StandardCopyOption.REPLACE_EXISTING);
        long ranks = dumps.all().stream().mapToInt(TraceDump::rank).distinct().count();
        long calls = dumps.all().stream().mapToLong(dump -> dump.entries().size()).sum();
        out().println("wrote " + out + ": " + ranks + (ranks == 1 ? " rank, " : " ranks, ") + calls
                + (calls == 1 ? " call" : " calls") + "; open it in Perfetto or chrome://tracing");
        return 0;
    }
}
