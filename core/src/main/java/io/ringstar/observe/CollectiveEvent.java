package io.ringstar.observe;

import java.util.Map;
import java.util.Objects;

/**
 * One collective call on one rank at one moment of its life, as a {@link CollectiveListener}
 * hears it: what was called, with which tensors, and its times so far. Immutable; made for the
 * listeners only (a rank with no listener makes none).
 *
 * <p>Times are {@link System#nanoTime()} readings of this process; 0 for a moment that has not
 * come yet ({@link #startedNanos()} of an issued call, {@link #endedNanos()} of a running one).
 */
public final class CollectiveEvent {
    private final int rank;
    private final int worldSize;
    private final long sequence;
    private final String operation;
    private final String algorithm;
    private final int root;
    private final Map<String, Long> elements;
    private final int tensors;
    private final long bytes;
    private final CollectiveState state;
    private final long issuedNanos;
    private final long startedNanos;
    private final long endedNanos;
    private final long waitNanos;
    private final Throwable failure;

    /**
     * @param sequence the call's number on its rank's transport, 1 for the first
     * @param root the root rank, or -1 for a collective without one
     * @param elements per data type (ND4J's {@code DataType} names) the element count of the tensors
     * @param failure for {@link CollectiveState#FAILED}, the exception; else null
     */
    public CollectiveEvent(int rank, int worldSize, long sequence, String operation, String algorithm, int root,
            Map<String, Long> elements, int tensors, long bytes, CollectiveState state, long issuedNanos,
            long startedNanos, long endedNanos, long waitNanos, Throwable failure) {
        this.rank = rank;
        this.worldSize = worldSize;
        this.sequence = sequence;
        this.operation = Objects.requireNonNull(operation, "operation");
        this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
        this.root = root;
        this.elements = Map.copyOf(elements);
        this.tensors = tensors;
        this.bytes = bytes;
        this.state = Objects.requireNonNull(state, "state");
        this.issuedNanos = issuedNanos;
        this.startedNanos = startedNanos;
        this.endedNanos = endedNanos;
        this.waitNanos = waitNanos;
        this.failure = failure;
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return worldSize;
    }

    /**
     * The call's number: 1 for the first call on this rank's transport, counted over every
     * communicator and aggregator that shares it (the async server counts its own), the same on
     * every rank that makes the same calls.
     */
    public long sequence() {
        return sequence;
    }

    /** The API's name of the call: {@code allReduce}, {@code reduceGradients}, {@code push}, ... */
    public String operation() {
        return operation;
    }

    /** How it runs: {@code ring}, {@code doubling}, {@code star}, {@code direct}, {@code transport}, {@code async}. */
    public String algorithm() {
        return algorithm;
    }

    /** The root rank of a broadcast or reduce, or -1. */
    public int root() {
        return root;
    }

    /** Per data type (ND4J's {@code DataType} names, such as {@code FLOAT}) the element count; empty for a barrier. */
    public Map<String, Long> elements() {
        return elements;
    }

    /** How many tensors the call was given. */
    public int tensors() {
        return tensors;
    }

    /** The bytes of the call's tensors (not what went on the wire). */
    public long bytes() {
        return bytes;
    }

    public CollectiveState state() {
        return state;
    }

    public long issuedNanos() {
        return issuedNanos;
    }

    /** When the call began to run, or 0 while it is only issued. */
    public long startedNanos() {
        return startedNanos;
    }

    /** When it completed or failed, or 0 before. */
    public long endedNanos() {
        return endedNanos;
    }

    /** Of its time so far, how long the call waited for its peers. */
    public long waitNanos() {
        return waitNanos;
    }

    /** The exception a failed call ended with, or null. */
    public Throwable failure() {
        return failure;
    }

    @Override
    public String toString() {
        return operation + " #" + sequence + " on rank " + rank + " (" + algorithm + ", " + bytes + " bytes): "
                + state.label();
    }
}
