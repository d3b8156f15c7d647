package io.ringstar.spi.handshake;

import io.ringstar.CollectiveException;

/**
 * A peer refused this rank's handshake, this rank refused the peer's answer, or what answered is
 * no ringstar rank of this job: a different job id, world size or protocol version, a rank that is
 * already taken, a wrong or missing shared secret, bytes that are not handshake records. Retrying
 * does not help; the configuration of one side is wrong. Transports may throw a subclass.
 */
public class RefusedException extends CollectiveException {
    public RefusedException(String operation, int rank, int peerRank, String detail) {
        super(operation, rank, peerRank, detail);
    }
}
