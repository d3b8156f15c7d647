package io.ringstar.bench;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.ranks.Algorithm;
import java.util.List;
import java.util.Locale;
import java.util.function.ToLongFunction;
import org.HdrHistogram.Histogram;

/**
 * One measured row of the bench: one transport, element type, algorithm, operation and size.
 *
 * @param algorithmLabel the algorithm as the table and the files name it: its label, and for the
 *     communicator {@code comm} or, with its all-reduce algorithm forced, {@code comm-ring} and so on
 * @param sizeBytes bytes of the full buffer as nccl-tests counts them: the gathered result of
 *     all-gather, the input of reduce-scatter, the tensor otherwise
 * @param count elements of that buffer
 * @param iters the timed calls the percentiles are taken over
 * @param p50Nanos median of the per-call times (see {@link #percentile})
 * @param p99Nanos 99th percentile of the per-call times
 * @param busFactor bus bandwidth over algorithm bandwidth for this operation and world size
 * @param wrong wrong elements in the checked call, summed over every rank
 * @param heapPeakPerRank peak heap bytes: one value per rank when each rank is a process, one
 *     value for the whole JVM when the ranks are its threads
 * @param offHeapPeakPerRank peak off-heap bytes, counted the same way
 * @param threadUsage what the kernel counted for each rank's calling thread over the row's timed
 *     calls, one per rank (every rank of the group, with threads or gathered from the processes)
 * @param processUsage what it counted for each process over them: one per rank when each rank is
 *     a process, one for the JVM (all its rank threads, background threads and the rest) otherwise
 */
record BenchRow(String transport, ElementType type, Algorithm algorithm, String algorithmLabel, Operation operation,
        long sizeBytes, long count, int iters, long p50Nanos, long p99Nanos, double busFactor, long wrong,
        List<Long> heapPeakPerRank, List<Long> offHeapPeakPerRank, List<ResourceCounters> threadUsage,
        List<ResourceCounters> processUsage) {
    /** Precision of the percentiles: 3 significant digits, a relative error below 0.1%. */
    private static final int SIGNIFICANT_DIGITS = 3;

    BenchRow {
        heapPeakPerRank = List.copyOf(heapPeakPerRank);
        offHeapPeakPerRank = List.copyOf(offHeapPeakPerRank);
        threadUsage = List.copyOf(threadUsage);
        processUsage = List.copyOf(processUsage);
    }

    /** A calling thread's CPU time per call in microseconds, the mean over the ranks; NaN when unknown. */
    double threadCpuMicros() {
        return ResourceCounters.meanPerCall(threadUsage, ResourceCounters::cpuNanos, iters) / 1e3;
    }

    /** A process's CPU time per call in microseconds, the mean over the processes; NaN when unknown. */
    double processCpuMicros() {
        return ResourceCounters.meanPerCall(processUsage, ResourceCounters::cpuNanos, iters) / 1e3;
    }

    /** {@code field} of the calling threads per call, the mean over the ranks; NaN when unknown. */
    double perThreadCall(ToLongFunction<ResourceCounters> field) {
        return ResourceCounters.meanPerCall(threadUsage, field, iters);
    }

    /** {@code field} of the processes per call, the mean over the processes; NaN when unknown. */
    double perProcessCall(ToLongFunction<ResourceCounters> field) {
        return ResourceCounters.meanPerCall(processUsage, field, iters);
    }

    String typeName() {
        return typeName(type);
    }

    /** A type as the flags, the table and the files name it: float, double. */
    static String typeName(ElementType type) {
        return type.name().toLowerCase(Locale.ROOT);
    }

    /** Bytes of the message over the median call time, in GB/s of 10^9 bytes (bytes per ns). */
    double algbwGbps() {
        return (double) sizeBytes / p50Nanos;
    }

    double busbwGbps() {
        return algbwGbps() * busFactor;
    }

    /** The largest rank's (or the JVM's) heap peak. */
    long heapPeakBytes() {
        return heapPeakPerRank.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    long offHeapPeakBytes() {
        return offHeapPeakPerRank.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /**
     * The percentile of the per-call times, as HdrHistogram takes it at 3 significant digits: the
     * time that {@code percent}% of the calls did not exceed (the nearest rank, rounded to the
     * nearest call: with fewer than 100 calls the 99th percentile is the slowest call), exact below
     * 2048 ns and within 0.1% above, never above the slowest call. At least 1 ns, so that bandwidths stay finite.
     */
    static long percentile(long[] nanos, double percent) {
        if (nanos.length == 0) {
            throw new IllegalArgumentException("no times to take a percentile of");
        }
        Histogram histogram = new Histogram(SIGNIFICANT_DIGITS);
        long slowest = 1;
        for (long time : nanos) {
            histogram.recordValue(Math.max(1, time));
            slowest = Math.max(slowest, time);
        }
        // HdrHistogram answers with the top of the value's bucket, which may lie above every time
        // measured: never report more than the slowest call.
        return Math.max(1, Math.min(slowest, histogram.getValueAtPercentile(percent)));
    }
}
