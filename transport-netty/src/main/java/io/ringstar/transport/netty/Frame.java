package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;

/**
 * The frame that carries everything on a connection once its handshake is done. Every frame is a
 * 16-byte little-endian header and then {@code payloadLength} bytes:
 *
 * <pre>
 *  offset  size  field
 *   0      4     payloadLength   bytes that follow this header, 0..{@link #MAX_PAYLOAD}
 *   4      2     magic           0x4652 ("RF" on the wire): a cheap check against stray bytes
 *   6      1     type            {@link #DATA}, {@link #BARRIER} or {@link #CLOSE}
 *   7      1     flags           {@link #FIRST} on the frame that starts a message
 *   8      8     value           DATA+FIRST: the message's whole length; BARRIER: its epoch; else 0
 * </pre>
 *
 * A message longer than {@link #MAX_PAYLOAD} goes as several DATA frames, the first flagged
 * {@link #FIRST} and carrying the whole length, so no frame length ever nears an int's range and a
 * receiver can refuse a message that does not fit before it reads any of it.
 */
final class Frame {
    static final int HEADER_BYTES = 16;
    /** The largest payload one frame may carry; a receiver treats a larger claim as garbage. */
    static final int MAX_PAYLOAD = 4 << 20;
    static final short MAGIC = 0x4652;

    static final byte DATA = 1;
    static final byte BARRIER = 2;
    static final byte CLOSE = 3;

    static final byte FIRST = 1;

    private Frame() {
    }

    static void writeHeader(ByteBuf out, int payloadLength, byte type, byte flags, long value) {
        out.writeIntLE(payloadLength);
        out.writeShortLE(MAGIC);
        out.writeByte(type);
        out.writeByte(flags);
        out.writeLongLE(value);
    }
}
