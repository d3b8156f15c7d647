package io.ringstar.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The bench's output table in the layout of nccl-tests: one row per size, element type,
 * algorithm, operation and transport, with the median and 99th-percentile time, algorithm and bus
 * bandwidth, the count of wrong elements and the peak memory. Bandwidths are in GB/s of 10^9
 * bytes, as nccl-tests reports them; memory in MiB. Then, per timed call, what the kernel counted:
 * the calling thread's CPU time (the mean over the ranks), the process's (over the processes), and
 * the calling thread's minor page faults and voluntary/involuntary context switches; "-" where it
 * does not count them. CPU time near p50 says a call worked; far below it, with voluntary
 * switches, that it waited.
 */
final class ResultTable {
    private static final String HEADER_FORMAT =
            "#%12s %12s %6s %13s %13s %9s %12s %12s %12s %12s %7s %10s %12s %11s %11s %8s %13s%n";
    private static final String ROW_FORMAT =
            " %12d %12d %6s %13s %13s %9s %12.1f %12.1f %12.4f %12.4f %7d %10.1f %12.1f %11s %11s %8s %13s%n";
    private static final double MIB = 1 << 20;

    private final PrintStream out;
    private final boolean memoryPerRank;

    /**
     * @param memoryPerRank whether the memory figures are per rank (each rank a process: a line
     *     with every rank's follows each row) or per JVM (ranks are threads of this one)
     */
    ResultTable(PrintStream out, boolean memoryPerRank) {
        this.out = out;
        this.memoryPerRank = memoryPerRank;
    }

    void printHeader() {
        out.printf(Locale.ROOT, HEADER_FORMAT, "size(B)", "count(elem)", "type", "algorithm", "op", "transport",
                "p50(us)", "p99(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong", "heap(MiB)", "offheap(MiB)",
                "cpu(us)", "proc-cpu(us)", "minflt", "csw vol/inv");
        out.flush();
    }

    void printRow(BenchRow row) {
        out.printf(Locale.ROOT, ROW_FORMAT, row.sizeBytes(), row.count(), row.typeName(), row.algorithmLabel(),
                row.operation().label(), row.transport(), row.p50Nanos() / 1e3, row.p99Nanos() / 1e3, row.algbwGbps(),
                row.busbwGbps(), row.wrong(), row.heapPeakBytes() / MIB, row.offHeapPeakBytes() / MIB,
                figure(row.threadCpuMicros(), "%.1f"), figure(row.processCpuMicros(), "%.1f"),
                figure(row.perThreadCall(ResourceCounters::minorFaults), "%.2f"),
                figure(row.perThreadCall(ResourceCounters::voluntarySwitches), "%.2f") + "/"
                        + figure(row.perThreadCall(ResourceCounters::involuntarySwitches), "%.2f"));
        if (memoryPerRank) {
            out.printf(Locale.ROOT, "#   peak MiB by rank 0..%d: heap %s; offheap %s%n",
                    row.heapPeakPerRank().size() - 1, mebibytes(row.heapPeakPerRank()),
                    mebibytes(row.offHeapPeakPerRank()));
        }
        out.flush();
    }

    /** A per-call figure, or "-" where the system does not count it. */
    private static String figure(double value, String format) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, format, value);
    }

    private static String mebibytes(List<Long> bytes) {
        return bytes.stream().map(value -> String.format(Locale.ROOT, "%.1f", value / MIB))
                .collect(Collectors.joining(" "));
    }
}
