package io.ringstar.async;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PeerFailureException;

/** Rewraps a failure for this rank's report while keeping its type and the rank it is about. */
final class AsyncFailures {
    private AsyncFailures() {
    }

    /**
     * An exception of {@code cause}'s type (peer failure, timeout, mismatch, or the base type)
     * reported by {@code rank}, about {@code cause}'s peer if it names one, else {@code peer}.
     */
    static CollectiveException about(CollectiveException cause, String operation, int rank, int peer,
            String detail) {
        int about = cause.peerRank() != CollectiveException.NO_RANK && cause.peerRank() != rank ? cause.peerRank()
                : peer;
        if (cause instanceof PeerFailureException) {
            return new PeerFailureException(operation, rank, about, detail, cause);
        }
        if (cause instanceof CollectiveTimeoutException) {
            return new CollectiveTimeoutException(operation, rank, about, detail, cause);
        }
        if (cause instanceof CollectiveMismatchException) {
            return new CollectiveMismatchException(operation, rank, about, detail, cause);
        }
        return new CollectiveException(operation, rank, about, detail, cause);
    }

    /** A peer failure about {@code peer}: the rank that died, or that another rank saw die. */
    static PeerFailureException peerFailure(String operation, int rank, int peer, String detail) {
        return new PeerFailureException(operation, rank, peer, detail);
    }
}
