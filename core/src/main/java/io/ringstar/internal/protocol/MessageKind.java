package io.ringstar.internal.protocol;

/**
 * What a collective message is, written into byte 5 of the {@link MessageHeader}. Each algorithm
 * has kinds of its own, so ranks that call different operations, or run different algorithms,
 * see a kind they did not expect and fail with a mismatch instead of exchanging wrong numbers.
 */
public enum MessageKind {
    /** A chunk of ring all-reduce, reduce-scatter or all-gather phase. */
    RING_ALL_REDUCE(1, "all-reduce (ring)"),
    /**
     * A chunk of a two-rank ring all-reduce, which is one exchange of the whole input: a kind of its
     * own, since its chunks cover other elements than a longer ring's.
     */
    RING_PAIR_EXCHANGE(8, "all-reduce (ring)"),
    /** A chunk of ring (chain) broadcast from the root. */
    RING_BROADCAST(2, "broadcast (ring)"),
    /** The last rank's notice to the root that a ring broadcast has reached the end of the chain. */
    RING_BROADCAST_DONE(3, "broadcast (ring)"),
    /** A chunk of a worker's gradients on its way to rank 0. */
    STAR_REDUCE(4, "all-reduce (star)"),
    /** A chunk of the averaged gradients on its way from rank 0 to a worker. */
    STAR_REDUCE_RESULT(5, "all-reduce (star)"),
    /** A worker's notice to rank 0 that it has entered a broadcast, with its tensor layout. */
    STAR_BROADCAST_READY(6, "broadcast (star)"),
    /** A chunk of rank 0's parameters on its way to a worker. */
    STAR_BROADCAST(7, "broadcast (star)"),
    /** A chunk of a recursive-doubling all-reduce, its fold-in or its fold-out. */
    DOUBLING_ALL_REDUCE(9, "all-reduce (recursive doubling)"),
    /** A chunk of a ring all-gather: one rank's block on its way around the ring. */
    RING_ALL_GATHER(10, "all-gather (ring)"),
    /** A chunk of a ring reduce-scatter: a partial reduction on its way around the ring. */
    RING_REDUCE_SCATTER(11, "reduce-scatter (ring)"),
    /** A round of a barrier (a recursive doubling of no elements). */
    BARRIER(12, "barrier"),
    /** A chunk of a rank's values on its way to the root of a reduce. */
    DIRECT_REDUCE(13, "reduce (direct)"),
    /** The root's notice to every rank that a reduce is complete. */
    DIRECT_REDUCE_DONE(14, "reduce (direct)"),
    /** A rank failed; the payload says why (see {@code io.ringstar.internal.algorithm.AbortNotice}). */
    ABORT(15, "abort"),
    /** A chunk of a rank's top-k pairs on its way around the ring of a compressed all-reduce. */
    TOPK_ALL_GATHER(16, "all-reduce (top-k pairs, ring)"),
    /** A worker's top-k indices or values of one partition on their way to the partition's server. */
    TOPK_STAR_PAIRS(17, "all-reduce (top-k pairs, star)"),
    /** A server's dense sum of one partition's top-k pairs on its way to a worker. */
    TOPK_STAR_RESULT(18, "all-reduce (top-k pairs, star)");

    private final int code;
    private final String operation;

    MessageKind(int code, String operation) {
        this.code = code;
        this.operation = operation;
    }

    /** The byte written on the wire. */
    public int code() {
        return code;
    }

    /** The user-facing operation this kind belongs to, for error messages. */
    public String operation() {
        return operation;
    }

    /** The constants, in one array for lookups that allocate nothing ({@code values()} copies). */
    private static final MessageKind[] ALL = values();

    /** The kind with this wire code, or {@code null} if there is none. */
    public static MessageKind fromCode(int code) {
        for (MessageKind kind : ALL) {
            if (kind.code == code) {
                return kind;
            }
        }
        return null;
    }
}
