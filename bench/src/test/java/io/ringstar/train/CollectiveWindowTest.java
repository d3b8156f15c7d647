package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstar.observe.CollectiveStatistics;
import io.ringstar.observe.OperationStatistics;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A progress line's figures of one operation: the change between two snapshots, and the text. */
class CollectiveWindowTest {
    private static OperationStatistics reduce(long calls, long totalMillis, long waitingMillis, long p50Micros,
            long p99Micros) {
        return new OperationStatistics(CollectiveWindow.REDUCE_GRADIENTS, calls, calls * 4096,
                Duration.ofNanos(p50Micros * 1000), Duration.ofNanos(p99Micros * 1000),
                Duration.ofNanos(p99Micros * 1000), Duration.ofMillis(totalMillis), Duration.ofMillis(waitingMillis));
    }

    private static OperationStatistics broadcast() {
        return new OperationStatistics("broadcastParams", 1, 64, Duration.ofMillis(3), Duration.ofMillis(3),
                Duration.ofMillis(3), Duration.ofMillis(3), Duration.ZERO);
    }

    @Test
    void eachLineCountsTheCallsSinceThePreviousOne() {
        Deque<CollectiveStatistics> snapshots = new ArrayDeque<>(List.of(
                new CollectiveStatistics(0, List.of(broadcast())),
                new CollectiveStatistics(0, List.of(broadcast(), reduce(10, 40, 10, 1200, 4100))),
                new CollectiveStatistics(0, List.of(broadcast(), reduce(20, 100, 40, 2500, 9000))),
                new CollectiveStatistics(0, List.of(broadcast(), reduce(20, 100, 40, 2500, 9000)))));
        CollectiveWindow window = new CollectiveWindow(snapshots::removeFirst, CollectiveWindow.REDUCE_GRADIENTS);

        CollectiveWindow.Figures none = window.next();
        assertEquals(0, none.calls());
        assertEquals("", none.describe(), "no call completed: nothing to say");

        CollectiveWindow.Figures first = window.next();
        assertEquals(10, first.calls());
        assertEquals(Duration.ofMillis(40).toNanos(), first.nanos());
        assertEquals("  reduceGradients p50 1.20 ms p99 4.10 ms waiting  25%", first.describe());

        CollectiveWindow.Figures second = window.next();
        assertEquals(10, second.calls());
        assertEquals(Duration.ofMillis(60).toNanos(), second.nanos());
        assertEquals(Duration.ofMillis(30).toNanos(), second.waitNanos());
        // The percentiles are the statistics' own, since the start; the waiting share is the window's.
        assertEquals("  reduceGradients p50 2.50 ms p99 9.00 ms waiting  50%", second.describe());

        assertEquals("", window.next().describe(), "no call since the previous line");
    }

    @Test
    void theTotalIsTheOperationsWholeTime() {
        CollectiveStatistics statistics = new CollectiveStatistics(2, List.of(broadcast(), reduce(5, 70, 0, 1, 2)));
        assertEquals(Duration.ofMillis(70).toNanos(), CollectiveWindow.totalNanos(statistics,
                CollectiveWindow.REDUCE_GRADIENTS));
        assertEquals(0, CollectiveWindow.totalNanos(new CollectiveStatistics(2, List.of()),
                CollectiveWindow.REDUCE_GRADIENTS), "an aggregator of one rank keeps no statistics");
    }
}
