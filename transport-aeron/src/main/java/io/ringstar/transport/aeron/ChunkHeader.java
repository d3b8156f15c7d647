package io.ringstar.transport.aeron;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The header at the start of every transport message on an Aeron stream, little-endian at fixed
 * offsets. A message of {@code length} payload bytes is the header followed by the payload, cut into
 * Aeron messages ("chunks") of at most the chunk size; only the first chunk carries the header, and
 * the receiver appends the chunks after it in stream order until {@code length} bytes have come.
 * Control records (barrier, ready, goodbye) are a header alone.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                       magic "RSTA"                            |  0
 *  +---------------------------------------------------------------+
 *  |                          kind                                 |  4
 *  +---------------------------------------------------------------+
 *  |                 value: payload length (DATA),                 |  8
 *  +              barrier epoch (BARRIER), else 0                  +
 *  |                                                               | 12
 *  +---------------------------------------------------------------+
 * </pre>
 */
final class ChunkHeader {
    static final int LENGTH = 16;
    /** "RSTA" read as a little-endian int; a chunk without it means the stream lost its framing. */
    static final int MAGIC = 0x41545352;

    static final int MAGIC_OFFSET = 0;
    static final int KIND_OFFSET = 4;
    static final int VALUE_OFFSET = 8;

    /** A message for {@code recv}; value is the payload length. */
    static final int DATA = 1;
    /** This rank reached barrier number value. */
    static final int BARRIER = 2;
    /** Sent once the sender sees every stream of the group connected; ends forming the group. */
    static final int READY = 3;
    /** The sender closes its transport; nothing follows. */
    static final int GOODBYE = 4;
    /** The sender has read the peer's GOODBYE, so everything sent before it has arrived. */
    static final int GOODBYE_ACK = 5;

    private ChunkHeader() {
    }

    static void write(MutableDirectBuffer buffer, int offset, int kind, long value) {
        buffer.putInt(offset + MAGIC_OFFSET, MAGIC, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + KIND_OFFSET, kind, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(offset + VALUE_OFFSET, value, java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    static boolean hasMagic(DirectBuffer buffer, int offset, int length) {
        return length >= LENGTH && buffer.getInt(offset + MAGIC_OFFSET, java.nio.ByteOrder.LITTLE_ENDIAN) == MAGIC;
    }

    static int kind(DirectBuffer buffer, int offset) {
        return buffer.getInt(offset + KIND_OFFSET, java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    static long value(DirectBuffer buffer, int offset) {
        return buffer.getLong(offset + VALUE_OFFSET, java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    static String kindName(int kind) {
        return switch (kind) {
            case DATA -> "DATA";
            case BARRIER -> "BARRIER";
            case READY -> "READY";
            case GOODBYE -> "GOODBYE";
            case GOODBYE_ACK -> "GOODBYE_ACK";
            default -> "kind " + kind;
        };
    }
}
