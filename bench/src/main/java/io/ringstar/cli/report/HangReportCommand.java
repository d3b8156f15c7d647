package io.ringstar.cli.report;

import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code ringstar report hang DIR}: where the ranks of a job diverge ({@link HangReport}), from the
 * trace dumps its ranks wrote into DIR. Each file that is not a readable dump is named on stderr with
 * what is wrong, and the report goes on with the others. Exit status 0 when at least one dump was
 * read, 1 when DIR is missing or none was.
 */
@Command(name = "hang", mixinStandardHelpOptions = true,
        description = "Where the ranks of a job diverge: the first call that not every rank completed, who waited "
                + "in it, who never reached it, who left no dump, and calls that differ between ranks, from the "
                + "trace dumps (*.json) in DIR.",
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:at least one dump read (unreadable files are named on stderr)",
            "1:DIR is missing, or holds no readable dump", "2:usage error"})
public final class HangReportCommand extends ReportJob {
    @Parameters(paramLabel = "DIR", description = "the directory the ranks dumped their traces into")
    private Path dir;

    @Override
    int report() throws IOException {
        TraceDumps dumps = TraceDumps.read(dir);
        if (!dumps.reportSkipped(err(), "ringstar report " + spec.name(), dir)) {
            return 1;
        }
        out().print(HangReport.render(dumps));
        return 0;
    }
}
