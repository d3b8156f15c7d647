package io.ringstar.bench;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The bench's output table in the layout of nccl-tests: one row per size, algorithm and
 * operation, with time, algorithm bandwidth, bus bandwidth and the count of wrong elements.
 * Bandwidths are in GB/s of 10^9 bytes, as nccl-tests reports them.
 */
final class ResultTable {
    private static final String HEADER_FORMAT = "#%12s %16s %7s %10s %10s %12s %12s %12s %8s%n";
    private static final String ROW_FORMAT = " %12d %16d %7s %10s %10s %12.1f %12.3f %12.3f %8d%n";

    private final PrintStream out;

    ResultTable(PrintStream out) {
        this.out = out;
    }

    void printHeader() {
        out.printf(Locale.ROOT, HEADER_FORMAT, "size(B)", "count(elements)", "type", "algorithm", "op", "time(us)",
                "algbw(GB/s)", "busbw(GB/s)", "#wrong");
        out.flush();
    }

    /**
     * Prints one row.
     *
     * @param timeNanos time of one call: the slowest rank's average over the timed iterations
     * @param busFactor bus bandwidth over algorithm bandwidth for this operation and world size
     */
    void printRow(long sizeBytes, long count, String type, String algorithm, String operation, double timeNanos,
            double busFactor, long wrong) {
        double algorithmBandwidth = sizeBytes / timeNanos; // bytes per ns = GB/s
        out.printf(Locale.ROOT, ROW_FORMAT, sizeBytes, count, type, algorithm, operation, timeNanos / 1e3,
                algorithmBandwidth, algorithmBandwidth * busFactor, wrong);
        out.flush();
    }
}
