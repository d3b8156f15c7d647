package io.ringstar.train;

import io.ringstar.observe.CollectiveStatistics;
import io.ringstar.observe.OperationStatistics;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * What a progress line says of one collective operation, read from its communicator's or
 * aggregator's {@code collectiveStatistics()} instead of timers of our own around the calls: the
 * calls that completed since the previous line, their summed time and the part of it spent waiting
 * for peers (each the change between two snapshots), and the median and 99th percentile of a call
 * since the start (the statistics' HdrHistogram keeps no window). Read once per progress line,
 * never per step: a snapshot allocates a few objects. Used by one thread.
 */
final class CollectiveWindow {
    /** The aggregators' gradient average, as the statistics name it. */
    static final String REDUCE_GRADIENTS = "reduceGradients";
    /** The communicator's all-reduce, which averages each bucket of {@code --overlap}. */
    static final String ALL_REDUCE = "allReduce";
    /** The async parameter server's gradient push, which returns the parameters to go on with. */
    static final String PUSH = "push";

    private final Supplier<CollectiveStatistics> statistics;
    private final String operation;
    private long calls;
    private long nanos;
    private long waitNanos;

    /**
     * @param statistics the snapshot of the communicator, aggregator or server that makes the calls;
     *     the first window counts from its opening
     */
    CollectiveWindow(Supplier<CollectiveStatistics> statistics, String operation) {
        this.statistics = statistics;
        this.operation = operation;
    }

    /** The figures since the previous call of this method (or since the statistics began), from one snapshot. */
    Figures next() {
        OperationStatistics now = statistics.get().operation(operation).orElse(null);
        if (now == null) {
            // No call completed yet (or an aggregator of one rank, which keeps no statistics).
            return new Figures(operation, 0, 0, 0, Duration.ZERO, Duration.ZERO);
        }
        long totalNanos = now.total().toNanos();
        long waitedNanos = now.waiting().toNanos();
        Figures figures = new Figures(operation, now.calls() - calls, totalNanos - nanos, waitedNanos - waitNanos,
                now.p50(), now.p99());
        calls = now.calls();
        nanos = totalNanos;
        waitNanos = waitedNanos;
        return figures;
    }

    /** The summed time of every completed call of {@code operation} so far, from one snapshot. */
    static long totalNanos(CollectiveStatistics statistics, String operation) {
        return statistics.operation(operation).map(o -> o.total().toNanos()).orElse(0L);
    }

    /**
     * One window of one operation.
     *
     * @param calls calls completed in the window
     * @param nanos their summed time, start to completion
     * @param waitNanos of that, the time spent waiting for peers
     * @param p50 median time of a call since the start
     * @param p99 99th percentile of a call's time since the start
     */
    record Figures(String operation, long calls, long nanos, long waitNanos, Duration p50, Duration p99) {
        /**
         * The progress line's part: {@code "  reduceGradients p50 1.20 ms p99 2.41 ms waiting  35%"},
         * or nothing when no call completed in the window.
         */
        String describe() {
            if (calls <= 0) {
                return "";
            }
            return String.format(Locale.ROOT, "  %s p50 %.2f ms p99 %.2f ms waiting %3.0f%%", operation,
                    p50.toNanos() / 1e6, p99.toNanos() / 1e6, 100 * Trainer.share(waitNanos, nanos));
        }
    }
}
