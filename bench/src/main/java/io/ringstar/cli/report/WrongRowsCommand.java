package io.ringstar.cli.report;

import io.ringstar.bench.report.ResultRow;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code ringstar report wrong FILE.csv...}: exit status 1, and a line per file saying how many of its
 * rows have wrong elements, when any row of the files does; 0 when every row is right.
 */
@Command(name = "wrong", mixinStandardHelpOptions = true,
        description = "Exit status 1 when some row of the files has wrong elements (column wrong not 0).")
public final class WrongRowsCommand extends ReportJob {
    @Parameters(arity = "1..*", paramLabel = "FILE.csv", description = "files in ringstar's CSV schema")
    private List<Path> files;

    @Override
    int report() throws IOException {
        int status = 0;
        for (Path file : files) {
            long wrong = ResultRow.read(file).stream().filter(ResultRow::isWrong).count();
            if (wrong > 0) {
                out().println(file + ": " + wrong + " rows have wrong elements (column wrong)");
                status = 1;
            }
        }
        return status;
    }
}
