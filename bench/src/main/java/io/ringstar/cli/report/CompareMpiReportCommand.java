package io.ringstar.cli.report;

import io.ringstar.bench.report.MpiRatioTables;
import io.ringstar.bench.report.ResultRow;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code ringstar report compare-mpi FILE.csv}: compare-mpi.sh's ratio tables ({@link MpiRatioTables}). */
@Command(name = "compare-mpi", mixinStandardHelpOptions = true,
        description = "busbw ringstar ÷ busbw Open MPI per world size, type and size, from compare-mpi.sh's CSV.")
public final class CompareMpiReportCommand extends ReportJob {
    @Parameters(paramLabel = "FILE.csv", description = "rows of ringstar and Open MPI in ringstar's CSV schema")
    private Path csv;

    @Override
    int report() throws IOException {
        out().print(MpiRatioTables.render(ResultRow.read(csv)));
        return 0;
    }
}
