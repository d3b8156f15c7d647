package io.ringstar;

/** A wait ran past its deadline: a peer did not send, or did not take what was sent, in time. */
public class CollectiveTimeoutException extends CollectiveException {
    public CollectiveTimeoutException(String operation, int rank, int peerRank, String detail) {
        super(operation, rank, peerRank, detail);
    }

    public CollectiveTimeoutException(String operation, int rank, int peerRank, String detail, Throwable cause) {
        super(operation, rank, peerRank, detail, cause);
    }
}
