package io.ringstar.cli.report;

import io.ringstar.bench.report.MpiRatioTables;
import io.ringstar.bench.report.ResultRow;
import io.ringstar.bench.report.TargetsTable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code ringstar report compare-mpi FILE.csv}: compare-mpi.sh's ratio tables ({@link MpiRatioTables}),
 * then issue 28's targets met or not ({@link TargetsTable}).
 */
@Command(name = "compare-mpi", mixinStandardHelpOptions = true,
        description = {"busbw ringstar ÷ busbw Open MPI per world size, type and size, from compare-mpi.sh's CSV,",
            "then issue 28's targets: the measured ratio or time, the target, met or not."})
public final class CompareMpiReportCommand extends ReportJob {
    @Parameters(paramLabel = "FILE.csv", description = "rows of ringstar and Open MPI in ringstar's CSV schema")
    private Path csv;

    @Override
    int report() throws IOException {
        List<ResultRow> rows = ResultRow.read(csv);
        out().print(MpiRatioTables.render(rows) + TargetsTable.render(rows));
        return 0;
    }
}
