package io.ringstar.internal.observe;

import io.ringstar.spi.TransportProbe;

/**
 * A rank's status as one {@code long}, what a peer's status query is answered with
 * ({@link TransportProbe#answerStatusWith}): where the rank is (no call yet, in a call, between
 * calls, failed), the number of that call (the current one, or the last completed), and how long
 * ago it started or completed, in milliseconds.
 *
 * <pre>
 *  bits 63-62  state: 0 no call yet, 1 in a call, 2 between calls, 3 failed
 *  bit  61     in a call: blocked waiting for a peer right now (not computing)
 *  bits 60-24  the call's sequence number (37 bits)
 *  bits 23-0   milliseconds since the call started (in a call) or ended (otherwise), saturated
 * </pre>
 * The value is never {@link TransportProbe#NO_ANSWER} (-1): the age saturates one below all ones.
 */
public final class RankStatus {
    public static final int NO_CALL = 0;
    public static final int IN_CALL = 1;
    public static final int BETWEEN_CALLS = 2;
    public static final int FAILED = 3;

    private static final long MAX_SEQUENCE = (1L << 37) - 1;
    private static final long WAITING = 1L << 61;
    private static final long MAX_AGE_MILLIS = (1L << 24) - 2;

    private RankStatus() {
    }

    public static long pack(int state, long sequence, long ageNanos) {
        return pack(state, sequence, ageNanos, false);
    }

    /** @param waiting in a call, whether it is blocked waiting for a peer */
    public static long pack(int state, long sequence, long ageNanos, boolean waiting) {
        long age = Math.min(MAX_AGE_MILLIS, Math.max(0, ageNanos / 1_000_000));
        return ((long) state << 62) | (waiting ? WAITING : 0) | (Math.min(sequence, MAX_SEQUENCE) << 24) | age;
    }

    /** Whether the rank was blocked waiting for a peer when it answered. */
    public static boolean waiting(long status) {
        return (status & WAITING) != 0;
    }

    public static int state(long status) {
        return (int) (status >>> 62);
    }

    public static long sequence(long status) {
        return (status >>> 24) & MAX_SEQUENCE;
    }

    public static long ageMillis(long status) {
        return status & ((1L << 24) - 1);
    }
}
