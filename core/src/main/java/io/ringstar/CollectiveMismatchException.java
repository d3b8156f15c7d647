package io.ringstar;

/**
 * Ranks disagree: they called different operations, or passed different tensor counts, shapes or
 * data types, or a message had another length than the receiver expected. The message names the
 * values on both sides.
 */
public class CollectiveMismatchException extends CollectiveException {
    public CollectiveMismatchException(String operation, int rank, int peerRank, String detail) {
        super(operation, rank, peerRank, detail);
    }

    public CollectiveMismatchException(String operation, int rank, int peerRank, String detail, Throwable cause) {
        super(operation, rank, peerRank, detail, cause);
    }
}
