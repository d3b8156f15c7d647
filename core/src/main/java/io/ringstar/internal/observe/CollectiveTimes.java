package io.ringstar.internal.observe;

import io.ringstar.observe.CollectiveStatistics;
import io.ringstar.observe.OperationStatistics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The statistics of one communicator's or aggregator's completed calls, per operation: counts,
 * bytes, times in an HdrHistogram, time waiting. Recorded by the thread that runs the calls, read
 * by any: each operation's numbers are guarded by its own lock, taken once per call, uncontended
 * unless someone reads at that moment. No allocation per call once an operation has been seen.
 */
final class CollectiveTimes {
    /** Times from 1 us (finer is noise) to an hour, at two significant digits. */
    private static final long LOWEST_NANOS = 1_000;
    private static final long HIGHEST_NANOS = 3_600_000_000_000L;

    private final Map<String, Times> byOperation = new LinkedHashMap<>();
    /** The last operation's numbers: a loop of one operation finds them without the map's lock. */
    private volatile Times last;

    void record(String operation, long bytes, long nanos, long waitNanos) {
        Times times = last;
        if (times == null || !times.operation.equals(operation)) {
            synchronized (byOperation) {
                times = byOperation.computeIfAbsent(operation, Times::new);
            }
            last = times;
        }
        times.record(bytes, nanos, waitNanos);
    }

    CollectiveStatistics snapshot(int rank) {
        List<Times> all;
        synchronized (byOperation) {
            all = new ArrayList<>(byOperation.values());
        }
        List<OperationStatistics> operations = new ArrayList<>();
        for (Times times : all) {
            operations.add(times.statistics());
        }
        return new CollectiveStatistics(rank, operations);
    }

    /** One operation's numbers. */
    private static final class Times {
        private final String operation;
        private final Histogram histogram = new Histogram(LOWEST_NANOS, HIGHEST_NANOS, 2);
        private long calls;
        private long bytes;
        private long totalNanos;
        private long waitNanos;

        Times(String operation) {
            this.operation = operation;
        }

        synchronized void record(long callBytes, long nanos, long waited) {
            histogram.recordValue(Math.min(HIGHEST_NANOS, Math.max(LOWEST_NANOS, nanos)));
            calls++;
            bytes += callBytes;
            totalNanos += nanos;
            waitNanos += waited;
        }

        synchronized OperationStatistics statistics() {
            return new OperationStatistics(operation, calls, bytes,
                    Duration.ofNanos(histogram.getValueAtPercentile(50)),
                    Duration.ofNanos(histogram.getValueAtPercentile(99)), Duration.ofNanos(histogram.getMaxValue()),
                    Duration.ofNanos(totalNanos), Duration.ofNanos(waitNanos));
        }
    }
}
