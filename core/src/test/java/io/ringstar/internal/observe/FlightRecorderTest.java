package io.ringstar.internal.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.CollectiveState;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The flight recorder's ring: what it keeps when it wraps and how it counts what it dropped, that
 * a capacity of 0 keeps nothing, and that each call's states and times are recorded as they happen.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class FlightRecorderTest {
    /** One FLOAT tensor of 7 elements: 28 bytes. */
    private static final TensorLayout SEVEN_FLOATS = TensorLayout.ofShapes(ElementType.FLOAT, new long[][] {{7}});

    /** Records call {@code sequence} as a blocking call that starts at {@code 100 s} and completes 1 us later. */
    private static void completedCall(FlightRecorder recorder, long sequence) {
        long start = 100_000_000_000L + 1_000 * sequence;
        recorder.add(sequence, "allReduce", "ring", -1, SEVEN_FLOATS, 28, start, start);
        recorder.ended(sequence, CollectiveState.COMPLETED, start + 1_000, 10, -1, null);
    }

    @Test
    void aFullRingKeepsTheNewestAndCountsWhatItDropped() {
        FlightRecorder recorder = new FlightRecorder(5);
        for (long sequence = 1; sequence <= 12; sequence++) {
            completedCall(recorder, sequence);
        }
        FlightRecorder.Snapshot snapshot = recorder.snapshot(0, -1);
        assertEquals(12, snapshot.recorded());
        assertEquals(7, snapshot.dropped());
        assertEquals(7, snapshot.lastDroppedSequence());
        List<FlightRecorder.Entry> entries = snapshot.entries();
        assertEquals(5, entries.size());
        for (int i = 0; i < 5; i++) {
            FlightRecorder.Entry entry = entries.get(i);
            long sequence = 8 + i;
            assertEquals(sequence, entry.sequence(), "entry " + i + " of the oldest-first list");
            assertSame(CollectiveState.COMPLETED, entry.state());
            assertEquals(100_000_000_000L + 1_000 * sequence, entry.startedNanos());
            assertEquals(100_000_000_000L + 1_000 * sequence + 1_000, entry.endedNanos());
            assertEquals(28, entry.bytes());
            assertSame(SEVEN_FLOATS, entry.layout());
        }
    }

    @Test
    void beforeItWrapsNothingIsDropped() {
        FlightRecorder recorder = new FlightRecorder(5);
        for (long sequence = 1; sequence <= 5; sequence++) {
            completedCall(recorder, sequence);
        }
        FlightRecorder.Snapshot snapshot = recorder.snapshot(0, -1);
        assertEquals(5, snapshot.recorded());
        assertEquals(0, snapshot.dropped());
        assertEquals(-1, snapshot.lastDroppedSequence());
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), snapshot.entries().stream().map(FlightRecorder.Entry::sequence)
                .toList());
    }

    @Test
    void theEndOfACallAlreadyDroppedChangesNoOtherEntry() {
        // Calls 1 and 2 issued, 3 and 4 run and completed while 1 and 2 were still queued (a ring of 2 drops them).
        FlightRecorder recorder = new FlightRecorder(2);
        recorder.add(1, "allReduce", "ring", -1, SEVEN_FLOATS, 28, 1_000, 0);
        recorder.add(2, "broadcast", "ring", 0, SEVEN_FLOATS, 28, 2_000, 0);
        completedCall(recorder, 3);
        completedCall(recorder, 4);
        recorder.started(1, 5_000);
        recorder.ended(1, CollectiveState.FAILED, 6_000, 0, 2, "CollectiveTimeoutException: late");
        FlightRecorder.Snapshot snapshot = recorder.snapshot(0, -1);
        assertEquals(2, snapshot.lastDroppedSequence());
        for (FlightRecorder.Entry entry : snapshot.entries()) {
            assertSame(CollectiveState.COMPLETED, entry.state(), "entry " + entry.sequence());
            assertNull(entry.error(), "entry " + entry.sequence());
            assertEquals(-1, entry.waitingOn(), "entry " + entry.sequence());
        }
    }

    @Test
    void aCapacityOfZeroKeepsNothing() {
        FlightRecorder recorder = new FlightRecorder(0);
        for (long sequence = 1; sequence <= 3; sequence++) {
            completedCall(recorder, sequence);
        }
        recorder.add(4, "allReduce", "ring", -1, SEVEN_FLOATS, 28, 1, 0);
        recorder.started(4, 2);
        recorder.ended(4, CollectiveState.FAILED, 3, 0, 1, "CollectiveMismatchException: shapes");
        FlightRecorder.Snapshot snapshot = recorder.snapshot(5, 1);
        assertEquals(0, recorder.capacity());
        assertEquals(0, snapshot.recorded());
        assertEquals(0, snapshot.dropped());
        assertEquals(-1, snapshot.lastDroppedSequence());
        assertTrue(snapshot.entries().isEmpty(), "entries: " + snapshot.entries());
    }

    @Test
    void everyStateIsRecordedInOrderWithTimesThatNeverGoBack() {
        FlightRecorder recorder = new FlightRecorder(8);

        // A non-blocking call: issued, started, completed.
        long issued = System.nanoTime();
        recorder.add(1, "allReduce", "doubling", -1, SEVEN_FLOATS, 28, issued, 0);
        FlightRecorder.Entry entry = only(recorder.snapshot(0, -1), 1);
        assertSame(CollectiveState.ISSUED, entry.state());
        assertEquals(issued, entry.issuedNanos());
        assertEquals(0, entry.startedNanos(), "an issued call has not started");
        assertEquals(0, entry.endedNanos());

        long started = System.nanoTime();
        recorder.started(1, started);
        // A running call's wait and peer are the dump's (the recorder does not know them).
        entry = only(recorder.snapshot(1_234, 2), 1);
        assertSame(CollectiveState.STARTED, entry.state());
        assertEquals(issued, entry.issuedNanos());
        assertEquals(started, entry.startedNanos());
        assertEquals(0, entry.endedNanos());
        assertEquals(1_234, entry.waitNanos());
        assertEquals(2, entry.waitingOn());

        long completed = System.nanoTime();
        recorder.ended(1, CollectiveState.COMPLETED, completed, 500, -1, null);
        entry = only(recorder.snapshot(9_999, 2), 1);
        assertSame(CollectiveState.COMPLETED, entry.state());
        assertEquals(completed, entry.endedNanos());
        assertEquals(500, entry.waitNanos(), "a completed call keeps its own wait, not the running call's");
        assertEquals(-1, entry.waitingOn());
        assertNull(entry.error());
        assertTrue(issued <= started && started <= completed, issued + " <= " + started + " <= " + completed);

        // A blocking call: issued and started at once, then failed, naming the peer it waited for.
        long start = System.nanoTime();
        recorder.add(2, "broadcast", "ring", 2, SEVEN_FLOATS, 28, start, start);
        entry = only(recorder.snapshot(0, -1), 2);
        assertSame(CollectiveState.STARTED, entry.state());
        assertEquals(start, entry.issuedNanos());
        assertEquals(start, entry.startedNanos());
        assertEquals(2, entry.root());

        long failed = System.nanoTime();
        recorder.ended(2, CollectiveState.FAILED, failed, 77, 2, "CollectiveTimeoutException: rank 2 was late");
        FlightRecorder.Snapshot snapshot = recorder.snapshot(0, -1);
        entry = only(snapshot, 2);
        assertSame(CollectiveState.FAILED, entry.state());
        assertEquals(failed, entry.endedNanos());
        assertEquals(77, entry.waitNanos());
        assertEquals(2, entry.waitingOn());
        assertEquals("CollectiveTimeoutException: rank 2 was late", entry.error());
        assertTrue(completed <= start && start <= failed);
        assertEquals(List.of(1L, 2L), snapshot.entries().stream().map(FlightRecorder.Entry::sequence).toList());
        assertEquals(List.of(CollectiveState.COMPLETED, CollectiveState.FAILED),
                snapshot.entries().stream().map(FlightRecorder.Entry::state).toList());
    }

    private static FlightRecorder.Entry only(FlightRecorder.Snapshot snapshot, long sequence) {
        return snapshot.entries().stream().filter(entry -> entry.sequence() == sequence).findFirst()
                .orElseThrow(() -> new AssertionError("no entry " + sequence + " in " + snapshot));
    }
}
