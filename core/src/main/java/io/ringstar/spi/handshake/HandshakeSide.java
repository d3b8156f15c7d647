package io.ringstar.spi.handshake;

import java.nio.ByteBuffer;

/**
 * What a transport's I/O loop needs of either side of a handshake ({@link Acceptor},
 * {@link Initiator}): how long a record may be now, and the step that follows a record or bytes
 * that are no record. A transport reads a record, hands it here, sends the step's reply if any,
 * and goes on while the step's outcome says so; one loop serves both sides.
 */
public interface HandshakeSide {

    /** The longest record to read from the peer now. */
    int recordLimit();

    /**
     * Takes one whole record from the peer. Never throws for what the peer sent.
     *
     * @param body the record after its type byte, little-endian; read by this call only
     */
    Step onRecord(byte type, ByteBuffer body);

    /** The step for bytes that are not a record at all (a length out of bounds). */
    Step onGarbage(String what);
}
