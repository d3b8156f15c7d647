package io.ringstar.spi.handshake;

import java.nio.ByteBuffer;

/**
 * What a handshake state machine made of one record: the record to send back (or null), and how
 * the handshake stands. The caller sends {@code reply} first, then acts on {@code outcome}.
 *
 * @param reply a whole record (length prefix included), positioned to be written, or null
 * @param reason why the handshake ended, for {@link Outcome#REFUSED}, {@link Outcome#DROPPED},
 *     {@link Outcome#ABANDONED} and {@link Outcome#BROKEN}; else null
 * @param peer the peer's identity once it has proved it ({@link Outcome#ADMITTED}, {@link Outcome#DONE})
 * @param table the table of ranks, for an initiator's registration that is {@link Outcome#DONE}
 */
public record Step(Outcome outcome, ByteBuffer reply, String reason, Identity peer, Table table) {

    /** How the handshake stands after a record. */
    public enum Outcome {
        /** Not over: send the reply (if any) and read the next record. */
        CONTINUE,
        /** Acceptor: the peer is admitted; send the WELCOME reply, then the connection is the peer's. */
        ADMITTED,
        /** Initiator: the handshake is over and the connection is the peer's ({@code table} for a registration). */
        DONE,
        /** The other side is refused, or refused this one; send the reply (if any) and close. Permanent. */
        REFUSED,
        /** Acceptor: bytes that are not a well-behaved handshake; close without a word. */
        DROPPED,
        /** Initiator: rank 0 gave up forming the group; {@code reason} names the ranks that never came. */
        ABANDONED,
        /** Initiator: the exchange broke in a way a new connection may cure. */
        BROKEN
    }

    static Step proceed(ByteBuffer reply) {
        return new Step(Outcome.CONTINUE, reply, null, null, null);
    }

    static Step refused(ByteBuffer reply, String reason) {
        return new Step(Outcome.REFUSED, reply, reason, null, null);
    }

    static Step of(Outcome outcome, String reason) {
        return new Step(outcome, null, reason, null, null);
    }

    /** True once the handshake has ended, either way. */
    public boolean over() {
        return outcome != Outcome.CONTINUE;
    }
}
