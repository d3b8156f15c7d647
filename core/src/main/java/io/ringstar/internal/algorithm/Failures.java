package io.ringstar.internal.algorithm;

import io.ringstar.CollectiveException;
import io.ringstar.internal.protocol.FailureKind;

/**
 * Restates failures so that each keeps its kind ({@link FailureKind}) when it gains context or is
 * reported again by a later call.
 */
public final class Failures {
    private Failures() {
    }

    /** A new exception of {@code e}'s kind for {@code operation}, with {@code e} as its cause. */
    static CollectiveException withContext(CollectiveException e, String operation, int rank, int peer,
            String context) {
        return FailureKind.of(e).create(operation, rank, peer, context + ": " + e.getMessage(), e);
    }

    /**
     * A new exception of {@code like}'s type (timeout, peer failure, mismatch, corruption, or the base
     * type) with the given operation, ranks and detail, and {@code like} as its cause: for code that
     * restates a failure in its own terms without changing what kind of failure it is.
     */
    public static CollectiveException sameKind(CollectiveException like, String operation, int rank, int peer,
            String detail) {
        return FailureKind.of(like).create(operation, rank, peer, detail, like);
    }

    /**
     * The exception for a call made after the group failed: the first failure's type, its peer,
     * and the first failure as cause.
     */
    public static CollectiveException again(CollectiveException first, String operation, int rank) {
        return FailureKind.of(first).create(operation, rank, first.peerRank(),
                "the group already failed, so it takes no more calls; first failure: " + first.getMessage(), first);
    }
}
