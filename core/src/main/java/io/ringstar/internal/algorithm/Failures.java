package io.ringstar.internal.algorithm;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.PeerFailureException;

/**
 * Creates exceptions of a given kind, so that a failure keeps its type when it gains context,
 * crosses ranks, or is reported again by a later call.
 */
public final class Failures {
    static final int TIMEOUT = 1;
    static final int PEER_FAILURE = 2;
    static final int MISMATCH = 3;
    static final int OTHER = 4;
    static final int CORRUPTION = 5;

    private Failures() {
    }

    static int code(CollectiveException e) {
        if (e instanceof CollectiveTimeoutException) {
            return TIMEOUT;
        }
        if (e instanceof PeerFailureException) {
            return PEER_FAILURE;
        }
        if (e instanceof CollectiveMismatchException) {
            return MISMATCH;
        }
        if (e instanceof PayloadCorruptionException) {
            return CORRUPTION;
        }
        return OTHER;
    }

    static CollectiveException create(int code, String operation, int rank, int peer, String detail, Throwable cause) {
        switch (code) {
            case TIMEOUT:
                return new CollectiveTimeoutException(operation, rank, peer, detail, cause);
            case PEER_FAILURE:
                return new PeerFailureException(operation, rank, peer, detail, cause);
            case MISMATCH:
                return new CollectiveMismatchException(operation, rank, peer, detail, cause);
            case CORRUPTION:
                return new PayloadCorruptionException(operation, rank, peer, detail, cause);
            default:
                return new CollectiveException(operation, rank, peer, detail, cause);
        }
    }

    /** A new exception of {@code e}'s kind for {@code operation}, with {@code e} as its cause. */
    static CollectiveException withContext(CollectiveException e, String operation, int rank, int peer,
            String context) {
        return create(code(e), operation, rank, peer, context + ": " + e.getMessage(), e);
    }

    /**
     * A new exception of {@code like}'s type (timeout, peer failure, mismatch, corruption, or the base
     * type) with the given operation, ranks and detail, and {@code like} as its cause: for code that
     * restates a failure in its own terms without changing what kind of failure it is.
     */
    public static CollectiveException sameKind(CollectiveException like, String operation, int rank, int peer,
            String detail) {
        return create(code(like), operation, rank, peer, detail, like);
    }

    /**
     * The exception for a call made after the group failed: the first failure's type, its peer,
     * and the first failure as cause.
     */
    public static CollectiveException again(CollectiveException first, String operation, int rank) {
        return create(code(first), operation, rank, first.peerRank(),
                "the group already failed, so it takes no more calls; first failure: "
                        + first.getMessage(), first);
    }
}
