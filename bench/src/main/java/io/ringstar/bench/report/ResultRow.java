package io.ringstar.bench.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One row of a result file in the schema of {@code ringstar bench --output x.csv}, which Open MPI's
 * program ({@code bench/mpi/collectives.c}), {@code compare-mpi.sh} and {@code cluster.sh} write too:
 * the columns the reports read. Other columns of the file are allowed and ignored.
 *
 * @param worldSize the number of ranks
 * @param transport the transport label ({@code netty}, {@code mpi-shm}...)
 * @param type the element type ({@code float}, {@code double})
 * @param algorithm {@code ps} (the star), {@code ring}, {@code mpi}, {@code mpi-reduce-bcast}
 * @param op {@code reduce} or {@code broadcast}
 * @param sizeBytes the message size
 * @param p50Micros the median of the slowest rank's time per call
 * @param p99Micros the 99th percentile of it
 * @param busbwGbps the bus bandwidth in GB/s
 * @param wrong how many elements were wrong (0 when the result was right; negative when it was not
 *     checked: the lossy top-k compression)
 */
public record ResultRow(int worldSize, String transport, String type, String algorithm, String op, long sizeBytes,
        double p50Micros, double p99Micros, double busbwGbps, long wrong) {

    /** The columns a result file must have. */
    public static final List<String> COLUMNS = List.of("world_size", "transport", "type", "algorithm", "op",
            "size_bytes", "time_p50_us", "time_p99_us", "busbw_gbps", "wrong");

    /** Reads every row of {@code file}; a missing column or a field that is not a number is refused. */
    public static List<ResultRow> read(Path file) throws IOException {
        CsvFile csv = CsvFile.read(file).require(COLUMNS);
        List<ResultRow> rows = new ArrayList<>();
        for (CsvFile.Row row : csv.rows()) {
            rows.add(new ResultRow(Math.toIntExact(row.whole("world_size")), row.get("transport"), row.get("type"),
                    row.get("algorithm"), row.get("op"), row.whole("size_bytes"), row.number("time_p50_us"),
                    row.number("time_p99_us"), row.number("busbw_gbps"), row.whole("wrong")));
        }
        return List.copyOf(rows);
    }

    /** Whether some element of this row was wrong (a negative count says the row was not checked). */
    public boolean isWrong() {
        return wrong > 0;
    }
}
