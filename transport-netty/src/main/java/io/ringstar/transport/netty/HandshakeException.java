package io.ringstar.transport.netty;

import io.ringstar.spi.handshake.RefusedException;

/**
 * A peer refused this rank's connection, or this rank refused the peer's answer: a different job
 * id, world size or protocol version, a rank that is already taken, or a wrong or missing shared
 * secret. Retrying does not help; the configuration of one side is wrong. The Netty transport's
 * {@link RefusedException}, kept under its own name for callers that catch it.
 */
public class HandshakeException extends RefusedException {
    public HandshakeException(String operation, int rank, int peerRank, String detail) {
        super(operation, rank, peerRank, detail);
    }
}
