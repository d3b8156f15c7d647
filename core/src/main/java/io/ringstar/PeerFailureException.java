package io.ringstar;

/** A peer left the group: its connection closed, its process died, or it closed its transport. */
public class PeerFailureException extends CollectiveException {
    public PeerFailureException(String operation, int rank, int peerRank, String detail) {
        super(operation, rank, peerRank, detail);
    }

    public PeerFailureException(String operation, int rank, int peerRank, String detail, Throwable cause) {
        super(operation, rank, peerRank, detail, cause);
    }
}
