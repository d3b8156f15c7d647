package io.ringstar.bench;

import io.ringstar.tensor.ElementType;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One measured row of the bench: one transport, element type, algorithm, operation and size.
 *
 * @param iters the timed calls the percentiles are taken over
 * @param p50Nanos median of the per-call times (see {@link #percentile})
 * @param p99Nanos 99th percentile of the per-call times
 * @param busFactor bus bandwidth over algorithm bandwidth for this operation and world size
 * @param wrong wrong elements in the checked call, summed over every rank
 * @param heapPeakPerRank peak heap bytes: one value per rank when each rank is a process, one
 *     value for the whole JVM when the ranks are its threads
 * @param offHeapPeakPerRank peak off-heap bytes, counted the same way
 */
record BenchRow(String transport, ElementType type, Algorithm algorithm, Operation operation, long sizeBytes,
        long count, int iters, long p50Nanos, long p99Nanos, double busFactor, long wrong, List<Long> heapPeakPerRank,
        List<Long> offHeapPeakPerRank) {

    BenchRow {
        heapPeakPerRank = List.copyOf(heapPeakPerRank);
        offHeapPeakPerRank = List.copyOf(offHeapPeakPerRank);
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
     * The nearest-rank percentile: the smallest time that at least {@code percent}% of the calls
     * did not exceed. With fewer than 100 calls the 99th percentile is the slowest call. At least
     * 1 ns, so that bandwidths stay finite.
     */
    static long percentile(long[] nanos, double percent) {
        if (nanos.length == 0) {
            throw new IllegalArgumentException("no times to take a percentile of");
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int index = (int) Math.ceil(percent / 100 * sorted.length) - 1;
        return Math.max(1, sorted[Math.max(0, Math.min(sorted.length - 1, index))]);
    }
}
