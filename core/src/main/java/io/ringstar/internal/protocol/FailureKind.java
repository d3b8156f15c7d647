package io.ringstar.internal.protocol;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.PeerFailureException;

/**
 * The kinds of failure that ranks tell each other, with the code each carries on the wire: in a
 * collective's abort notice and in the async parameter server's ABORT message alike, so the two
 * can never number them differently. A failure keeps its kind (its exception type) when it gains
 * context, crosses ranks, or is reported again by a later call.
 *
 * <p>The codes are fixed: a new kind takes a new code, and a changed code changes the protocols
 * that carry it (their version constants).
 */
public enum FailureKind {
    /** A wait ran past its deadline: {@link CollectiveTimeoutException}. */
    TIMEOUT(1),
    /** A peer is gone or its link broke: {@link PeerFailureException}. */
    PEER_FAILURE(2),
    /** Ranks called different collectives or passed different shapes: {@link CollectiveMismatchException}. */
    MISMATCH(3),
    /** Anything else: the base {@link CollectiveException}. */
    OTHER(4),
    /** A message's bytes did not match its checksum: {@link PayloadCorruptionException}. */
    CORRUPTION(5);

    private static final FailureKind[] BY_CODE = new FailureKind[6];

    static {
        for (FailureKind kind : values()) {
            BY_CODE[kind.code] = kind;
        }
    }

    private final int code;

    FailureKind(int code) {
        this.code = code;
    }

    /** The code this kind carries on the wire, 1 to 255. */
    public int code() {
        return code;
    }

    /** Whether {@code code} names a kind ({@link #fromCode} would return one). */
    public static boolean isKnown(long code) {
        return code > 0 && code < BY_CODE.length && BY_CODE[(int) code] != null;
    }

    /**
     * The kind that carries {@code code}.
     *
     * @throws IllegalArgumentException for a code no kind carries, naming it and the known codes
     */
    public static FailureKind fromCode(long code) {
        if (!isKnown(code)) {
            StringBuilder known = new StringBuilder();
            for (FailureKind kind : values()) {
                known.append(known.length() == 0 ? "" : ", ").append(kind.code).append(' ').append(kind);
            }
            throw new IllegalArgumentException("unknown failure kind code " + code + "; the known codes are " + known);
        }
        return BY_CODE[(int) code];
    }

    /** The kind of {@code failure}, by its type. */
    public static FailureKind of(CollectiveException failure) {
        if (failure instanceof CollectiveTimeoutException) {
            return TIMEOUT;
        }
        if (failure instanceof PeerFailureException) {
            return PEER_FAILURE;
        }
        if (failure instanceof CollectiveMismatchException) {
            return MISMATCH;
        }
        if (failure instanceof PayloadCorruptionException) {
            return CORRUPTION;
        }
        return OTHER;
    }

    /** A new exception of this kind's type, reported by {@code rank} about {@code peer}; {@code cause} may be null. */
    public CollectiveException create(String operation, int rank, int peer, String detail, Throwable cause) {
        return switch (this) {
            case TIMEOUT -> new CollectiveTimeoutException(operation, rank, peer, detail, cause);
            case PEER_FAILURE -> new PeerFailureException(operation, rank, peer, detail, cause);
            case MISMATCH -> new CollectiveMismatchException(operation, rank, peer, detail, cause);
            case CORRUPTION -> new PayloadCorruptionException(operation, rank, peer, detail, cause);
            case OTHER -> new CollectiveException(operation, rank, peer, detail, cause);
        };
    }
}
