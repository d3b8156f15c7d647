package io.ringstar.cli.report;

import io.ringstar.bench.report.Numbers;
import io.ringstar.bench.report.ResultRow;
import io.ringstar.bench.report.StarRingTable;
import io.ringstar.bench.report.VersusMpiTable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ringstar report cluster FILE.csv [--rate R] [--versus-mpi TRANSPORT]}: star ÷ ring and where
 * they cross ({@link StarRingTable}), and optionally ringstar against Open MPI ({@link VersusMpiTable}).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "Star ÷ ring (p50 of reduce) per size, world size, transport and type, and where they cross.")
public final class ClusterReportCommand extends ReportJob {
    @Parameters(paramLabel = "FILE.csv", description = "rows in ringstar's CSV schema (a sweep, or cluster.sh's)")
    private Path csv;

    @Option(names = "--rate", paramLabel = "R", defaultValue = "none",
            description = "the rate the links were shaped to (tc notation: 1gbit, 100mbit); none for unshaped. "
                    + "Adds n/2 and the ring's share of the link. Default: ${DEFAULT-VALUE}")
    private String rate;

    @Option(names = "--versus-mpi", paramLabel = "TRANSPORT",
            description = "add ringstar's p50 ÷ Open MPI's (rows of algorithm mpi, mpi-reduce-bcast), "
                    + "titled with ringstar's transport")
    private String versusMpi;

    @Override
    int report() throws IOException {
        List<ResultRow> rows = ResultRow.read(csv);
        out().print(StarRingTable.render(rows, Numbers.bitsPerSecond(rate)));
        if (versusMpi != null) {
            out().print("\nringstar (" + versusMpi + ") p50 ÷ Open MPI p50 (TCP) over the same links; above 1 "
                    + "ringstar is slower:\n\n" + VersusMpiTable.render(rows));
        }
        return 0;
    }
}
