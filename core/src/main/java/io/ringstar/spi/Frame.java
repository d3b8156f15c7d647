package io.ringstar.spi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The framing of the byte stream between two ranks, one codec for every peer transport: each
 * message and each control record starts with this 16-byte header, little-endian at fixed
 * offsets. A DATA frame is followed by {@code value} bytes of message, sent as one frame however
 * long (the receiver takes it in pieces as it arrives, so nothing needs the whole of it at once);
 * every other type is the header alone.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                 magic 0x46545352: "RSTF" on the wire          |  0
 * +---------------+---------------+-------------------------------+
 * |     type      |  flags (0)    |          reserved (0)         |  4
 * +---------------+---------------+-------------------------------+
 * |      value (64 bits): DATA the message length in bytes,       |  8
 * +      BARRIER the barrier's epoch, else a type's own value      +
 * |                                                               | 12
 * +---------------------------------------------------------------+
 * </pre>
 *
 * A header without the magic, of an unknown type, or announcing a negative or over-long message
 * means the stream lost its framing: the peer is failed, nothing more is read from it.
 */
public final class Frame {
    public static final int HEADER_BYTES = 16;
    /** "RSTF" read as a little-endian int. */
    public static final int MAGIC = 0x46545352;
    /** The longest message one frame carries: what a {@link ByteBuffer} can hold. */
    public static final int MAX_MESSAGE_BYTES = Integer.MAX_VALUE - 64;

    public static final int MAGIC_OFFSET = 0;
    public static final int TYPE_OFFSET = 4;
    public static final int FLAGS_OFFSET = 5;
    public static final int VALUE_OFFSET = 8;

    /** A message; value is its length. */
    public static final int DATA = 1;
    /** The sender reached barrier number value (1, 2, ...; each exactly one more than the last). */
    public static final int BARRIER = 2;
    /** The sender closes its transport; nothing follows. */
    public static final int GOODBYE = 3;
    /**
     * The sender asks for this rank's status ({@link TransportProbe#askStatus}); value unused (0). The
     * transport answers with {@link #STATUS_REPLY} by itself, at its next safe point.
     */
    public static final int STATUS_QUERY = 4;
    /** The answer to a {@link #STATUS_QUERY}; value is the sender's packed status, opaque to the transport. */
    public static final int STATUS_REPLY = 5;
    /** The group failed ({@link TransportProbe#reportFailure}); value is the rank it failed on first. */
    public static final int FAILURE_REPORT = 6;
    /**
     * Shared memory ({@code SharedMemoryNegotiation}): the sender made a ring file for this rank;
     * value is its nonce, which the file must hold too. Sent once, at the transport's start.
     */
    public static final int SHM_OFFER = 7;
    /** The sender has no ring for this rank (another host, or option sharedMemory=off); value 0. */
    public static final int SHM_NONE = 8;
    /** The answer to an {@link #SHM_OFFER}: value 1 if the sender mapped the ring and will read it, 0 if not. */
    public static final int SHM_ANSWER = 9;
    /** The last frame on the network: every later frame from the sender comes through its ring. */
    public static final int SHM_SWITCH = 10;
    /**
     * Types from here up belong to one transport (the transport's channel handles them); those below
     * are the skeleton's, which every transport carries alike.
     */
    public static final int FIRST_TRANSPORT_TYPE = 16;

    private Frame() {
    }

    /** Writes a header at absolute {@code offset} of {@code out}; the buffer's position and order stay. */
    public static void write(ByteBuffer out, int offset, int type, long value) {
        ByteBuffer le = out.order() == ByteOrder.LITTLE_ENDIAN ? out : null;
        if (le != null) {
            le.putInt(offset + MAGIC_OFFSET, MAGIC);
            le.putInt(offset + TYPE_OFFSET, type & 0xFF);
            le.putLong(offset + VALUE_OFFSET, value);
        } else {
            out.putInt(offset + MAGIC_OFFSET, Integer.reverseBytes(MAGIC));
            out.putInt(offset + TYPE_OFFSET, Integer.reverseBytes(type & 0xFF));
            out.putLong(offset + VALUE_OFFSET, Long.reverseBytes(value));
        }
    }

    static int magic(ByteBuffer in, int offset) {
        int raw = in.getInt(offset + MAGIC_OFFSET);
        return in.order() == ByteOrder.LITTLE_ENDIAN ? raw : Integer.reverseBytes(raw);
    }

    static int type(ByteBuffer in, int offset) {
        return in.get(offset + TYPE_OFFSET) & 0xFF;
    }

    static int flagsAndReserved(ByteBuffer in, int offset) {
        return (in.get(offset + FLAGS_OFFSET) & 0xFF) | (in.get(offset + 6) & 0xFF) | (in.get(offset + 7) & 0xFF);
    }

    static long value(ByteBuffer in, int offset) {
        long raw = in.getLong(offset + VALUE_OFFSET);
        return in.order() == ByteOrder.LITTLE_ENDIAN ? raw : Long.reverseBytes(raw);
    }

    /** A name for a type, for messages. */
    public static String typeName(int type) {
        return switch (type) {
            case DATA -> "DATA";
            case BARRIER -> "BARRIER";
            case GOODBYE -> "GOODBYE";
            case STATUS_QUERY -> "STATUS_QUERY";
            case STATUS_REPLY -> "STATUS_REPLY";
            case FAILURE_REPORT -> "FAILURE_REPORT";
            case SHM_OFFER -> "SHM_OFFER";
            case SHM_NONE -> "SHM_NONE";
            case SHM_ANSWER -> "SHM_ANSWER";
            case SHM_SWITCH -> "SHM_SWITCH";
            default -> "type " + type;
        };
    }
}
