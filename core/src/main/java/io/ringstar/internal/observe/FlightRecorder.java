package io.ringstar.internal.observe;

import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.CollectiveState;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank's last {@code capacity} collectives, kept in a ring of parallel arrays so that a call
 * records itself without allocating: the oldest entry is overwritten, and counted as dropped. The
 * layout of a call's tensors is kept by reference (layouts are immutable and shared from call to
 * call), so a call costs a few array stores.
 *
 * <p>Written by the threads that issue and run the calls and read by whoever dumps it: every
 * method holds this object's lock, uncontended but for a dump.
 */
final class FlightRecorder {
    private final int capacity;
    private final long[] sequences;
    private final String[] operations;
    private final String[] algorithms;
    private final int[] roots;
    private final TensorLayout[] layouts;
    private final long[] bytes;
    private final CollectiveState[] states;
    private final long[] issued;
    private final long[] started;
    private final long[] ended;
    private final long[] waits;
    private final int[] waitingOn;
    private final String[] errors;
    /** Entries recorded so far; the newest is at {@code (recorded - 1) % capacity}. */
    private long recorded;
    private long lastDropped;

    /** @param capacity entries kept; 0 keeps none (and every method does nothing) */
    FlightRecorder(int capacity) {
        this.capacity = capacity;
        sequences = new long[capacity];
        operations = new String[capacity];
        algorithms = new String[capacity];
        roots = new int[capacity];
        layouts = new TensorLayout[capacity];
        bytes = new long[capacity];
        states = new CollectiveState[capacity];
        issued = new long[capacity];
        started = new long[capacity];
        ended = new long[capacity];
        waits = new long[capacity];
        waitingOn = new int[capacity];
        errors = new String[capacity];
    }

    int capacity() {
        return capacity;
    }

    /** Records a new call, issued or already started (then {@code startedNanos} is its start, else 0). */
    synchronized void add(long sequence, String operation, String algorithm, int root, TensorLayout layout,
            long callBytes, long issuedNanos, long startedNanos) {
        if (capacity == 0) {
            return;
        }
        int slot = (int) (recorded % capacity);
        if (recorded >= capacity) {
            lastDropped = sequences[slot];
        }
        recorded++;
        sequences[slot] = sequence;
        operations[slot] = operation;
        algorithms[slot] = algorithm;
        roots[slot] = root;
        layouts[slot] = layout;
        bytes[slot] = callBytes;
        states[slot] = startedNanos == 0 ? CollectiveState.ISSUED : CollectiveState.STARTED;
        issued[slot] = issuedNanos;
        started[slot] = startedNanos;
        ended[slot] = 0;
        waits[slot] = 0;
        waitingOn[slot] = -1;
        errors[slot] = null;
    }

    /** An issued call began to run. */
    synchronized void started(long sequence, long nanos) {
        int slot = slotOf(sequence);
        if (slot >= 0) {
            states[slot] = CollectiveState.STARTED;
            started[slot] = nanos;
        }
    }

    /** When {@code sequence} was issued, or {@code fallback} if it is not (or no longer) recorded. */
    synchronized long issuedAt(long sequence, long fallback) {
        int slot = slotOf(sequence);
        return slot < 0 ? fallback : issued[slot];
    }

    /** A call completed or failed ({@code error} then says why, and {@code peer} is the peer it waited for or -1). */
    synchronized void ended(long sequence, CollectiveState state, long nanos, long waitNanos, int peer, String error) {
        int slot = slotOf(sequence);
        if (slot >= 0) {
            states[slot] = state;
            ended[slot] = nanos;
            waits[slot] = waitNanos;
            waitingOn[slot] = peer;
            errors[slot] = error;
        }
    }

    /** The slot of {@code sequence}, or -1 if it was never recorded or dropped already. */
    private int slotOf(long sequence) {
        if (capacity == 0 || recorded == 0) {
            return -1;
        }
        // Calls are recorded in sequence order, so the newest entries are searched from the newest back.
        long newest = recorded - 1;
        for (long i = newest; i >= 0 && i > newest - capacity; i--) {
            int slot = (int) (i % capacity);
            if (sequences[slot] == sequence) {
                return slot;
            }
            if (sequences[slot] < sequence) {
                return -1;
            }
        }
        return -1;
    }

    /**
     * A copy of the entries, oldest first. A started call's wait so far and the peer it waits for
     * are those given (the dump knows them; the recorder does not).
     */
    synchronized Snapshot snapshot(long runningWaitNanos, int runningWaitingOn) {
        List<Entry> entries = new ArrayList<>();
        long first = Math.max(0, recorded - capacity);
        for (long i = first; i < recorded; i++) {
            int slot = (int) (i % capacity);
            boolean running = states[slot] == CollectiveState.STARTED;
            entries.add(new Entry(sequences[slot], operations[slot], algorithms[slot], roots[slot], layouts[slot],
                    bytes[slot], states[slot], issued[slot], started[slot], ended[slot],
                    running ? runningWaitNanos : waits[slot], running ? runningWaitingOn : waitingOn[slot],
                    errors[slot]));
        }
        long dropped = Math.max(0, recorded - capacity);
        return new Snapshot(recorded, dropped, dropped > 0 ? lastDropped : -1, entries);
    }

    /** The entries and counts at one moment. */
    record Snapshot(long recorded, long dropped, long lastDroppedSequence, List<Entry> entries) {
    }

    /** One call as it was at the snapshot. */
    record Entry(long sequence, String operation, String algorithm, int root, TensorLayout layout, long bytes,
            CollectiveState state, long issuedNanos, long startedNanos, long endedNanos, long waitNanos,
            int waitingOn, String error) {
    }
}
