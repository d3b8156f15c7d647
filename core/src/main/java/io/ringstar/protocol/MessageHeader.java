package io.ringstar.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Flyweight over the fixed 48-byte header that starts every collective message. Little-endian,
 * fixed offsets; the payload follows at byte 48 (8-byte aligned, so doubles stay aligned).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |            magic 0x52545352: bytes "RSTR" on the wire         |  0
 * +---------------+---------------+---------------+---------------+
 * |    version    |     kind      | element type  |   reserved    |  4
 * +---------------+---------------+---------------+---------------+
 * |                          sender rank                          |  8
 * +---------------------------------------------------------------+
 * |                         message index                         | 12
 * +---------------------------------------------------------------+
 * |                    sequence number (64 bits)                  | 16
 * +---------------------------------------------------------------+
 * |          element count of this collective (64 bits)           | 24
 * +---------------------------------------------------------------+
 * |       layout fingerprint: count, shapes, types (64 bits)      | 32
 * +---------------------------------------------------------------+
 * |                         tensor count                          | 40
 * +---------------------------------------------------------------+
 * |                         payload bytes                         | 44
 * +---------------------------------------------------------------+
 * </pre>
 *
 * The sequence number counts the collectives of one aggregator, so a rank that skipped a call is
 * caught. The message index numbers the messages of one collective between one pair of ranks.
 */
public final class MessageHeader {
    public static final int LENGTH = 48;
    public static final int MAGIC = 0x52545352;
    public static final int VERSION = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int KIND_OFFSET = 5;
    public static final int ELEMENT_TYPE_OFFSET = 6;
    public static final int SENDER_RANK_OFFSET = 8;
    public static final int MESSAGE_INDEX_OFFSET = 12;
    public static final int SEQUENCE_OFFSET = 16;
    public static final int ELEMENT_COUNT_OFFSET = 24;
    public static final int FINGERPRINT_OFFSET = 32;
    public static final int TENSOR_COUNT_OFFSET = 40;
    public static final int PAYLOAD_BYTES_OFFSET = 44;

    private ByteBuffer buffer;

    /**
     * Points this flyweight at the first {@link #LENGTH} bytes of {@code buffer} (absolute index 0)
     * and sets the buffer's byte order to little-endian.
     */
    public MessageHeader wrap(ByteBuffer buffer) {
        if (buffer.limit() < LENGTH) {
            throw new IllegalArgumentException("header needs " + LENGTH + " bytes, buffer's limit is " + buffer.limit());
        }
        this.buffer = buffer.order(ByteOrder.LITTLE_ENDIAN);
        return this;
    }

    /** Writes every field; magic and version are implied. */
    public MessageHeader write(MessageKind kind, int elementTypeCode, int senderRank, int messageIndex,
            long sequence, long elementCount, long fingerprint, int tensorCount, int payloadBytes) {
        buffer.putInt(MAGIC_OFFSET, MAGIC);
        buffer.put(VERSION_OFFSET, (byte) VERSION);
        buffer.put(KIND_OFFSET, (byte) kind.code());
        buffer.put(ELEMENT_TYPE_OFFSET, (byte) elementTypeCode);
        buffer.put(ELEMENT_TYPE_OFFSET + 1, (byte) 0);
        buffer.putInt(SENDER_RANK_OFFSET, senderRank);
        buffer.putInt(MESSAGE_INDEX_OFFSET, messageIndex);
        buffer.putLong(SEQUENCE_OFFSET, sequence);
        buffer.putLong(ELEMENT_COUNT_OFFSET, elementCount);
        buffer.putLong(FINGERPRINT_OFFSET, fingerprint);
        buffer.putInt(TENSOR_COUNT_OFFSET, tensorCount);
        buffer.putInt(PAYLOAD_BYTES_OFFSET, payloadBytes);
        return this;
    }

    public int magic() {
        return buffer.getInt(MAGIC_OFFSET);
    }

    public int version() {
        return buffer.get(VERSION_OFFSET) & 0xFF;
    }

    /** The kind, or {@code null} for a code no kind has. */
    public MessageKind kind() {
        return MessageKind.fromCode(kindCode());
    }

    public int kindCode() {
        return buffer.get(KIND_OFFSET) & 0xFF;
    }

    public int elementTypeCode() {
        return buffer.get(ELEMENT_TYPE_OFFSET) & 0xFF;
    }

    public int senderRank() {
        return buffer.getInt(SENDER_RANK_OFFSET);
    }

    public int messageIndex() {
        return buffer.getInt(MESSAGE_INDEX_OFFSET);
    }

    public long sequence() {
        return buffer.getLong(SEQUENCE_OFFSET);
    }

    public long elementCount() {
        return buffer.getLong(ELEMENT_COUNT_OFFSET);
    }

    public long fingerprint() {
        return buffer.getLong(FINGERPRINT_OFFSET);
    }

    public int tensorCount() {
        return buffer.getInt(TENSOR_COUNT_OFFSET);
    }

    public int payloadBytes() {
        return buffer.getInt(PAYLOAD_BYTES_OFFSET);
    }

    @Override
    public String toString() {
        return "MessageHeader{kind=" + kind() + ", elementType=" + elementTypeCode() + ", sender=" + senderRank()
                + ", index=" + messageIndex() + ", sequence=" + sequence() + ", elements=" + elementCount()
                + ", tensors=" + tensorCount() + ", payloadBytes=" + payloadBytes() + '}';
    }
}
