package io.ringstar.internal.protocol;

import io.ringstar.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Flyweight over the fixed 64-byte header that starts every collective message. Little-endian,
 * fixed offsets; the payload follows at byte 64 (8-byte aligned, so doubles stay aligned).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |            magic 0x52545352: bytes "RSTR" on the wire         |  0
 * +---------------+---------------+---------------+---------------+
 * |    version    |     kind      | element type  |     flags     |  4
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
 * |   CRC32C of bytes 0..47, 52..63 and the payload, or 0         | 48
 * +---------------------------------------------------------------+
 * |   reduce op   |  compression  |     servers (16 bits)         | 52
 * +---------------+---------------+-------------------------------+
 * |                 root rank, or -1 for none                     | 56
 * +---------------------------------------------------------------+
 * |       compression parameter (top-k fraction as a float)       | 60
 * +---------------------------------------------------------------+
 * </pre>
 *
 * The sequence number counts the collectives of one aggregator, so a rank that skipped a call is
 * caught. The message index numbers the messages of one collective between one pair of ranks.
 * The reduce op (0 for a collective that reduces nothing, else {@link #opCode}) and the root (of a
 * broadcast or a reduce) are checked by every receiver, so ranks that disagree on them fail with a
 * mismatch that says so. So are the settings every rank must share: the compression (its code,
 * {@link io.ringstar.config.Compression.Kind#wireCode}, and parameter) and the number of
 * servers of the star.
 *
 * <p>Flag {@link #FLAG_CHECKSUM} says that the checksum field holds the CRC32C (Castagnoli) of the
 * header's first {@link #CHECKSUM_OFFSET} bytes, then its bytes from {@link #REDUCE_OP_OFFSET} to its end,
 * then the payload: every header byte but the checksum's own four. The header is covered too,
 * so a flipped bit there is reported as corruption rather than as a disagreement between ranks
 * that never happened. Without the flag the checksum field is zero and nobody reads it; the
 * receiver compares the flag with its own setting, so ranks configured differently fail with a
 * mismatch instead of one side trusting data the other never checked.
 */
public final class MessageHeader {
    public static final int LENGTH = 64;
    public static final int MAGIC = 0x52545352;
    /**
     * 5: bytes 53 to 55 and 60 to 63, reserved before, carry the compression and the servers.
     * 4: the header grew from 56 to 64 bytes for the reduce op and the root of the general
     * collectives. (3: from 48 to 56 bytes for the checksum, and byte 7 became the flags.)
     */
    public static final int VERSION = 5;
    /** Bit of the flags byte: the checksum field holds a CRC32C (see the class comment). */
    public static final int FLAG_CHECKSUM = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int KIND_OFFSET = 5;
    public static final int ELEMENT_TYPE_OFFSET = 6;
    public static final int FLAGS_OFFSET = 7;
    public static final int SENDER_RANK_OFFSET = 8;
    public static final int MESSAGE_INDEX_OFFSET = 12;
    public static final int SEQUENCE_OFFSET = 16;
    public static final int ELEMENT_COUNT_OFFSET = 24;
    public static final int FINGERPRINT_OFFSET = 32;
    public static final int TENSOR_COUNT_OFFSET = 40;
    public static final int PAYLOAD_BYTES_OFFSET = 44;
    /** The checksum covers every header byte but these four. */
    public static final int CHECKSUM_OFFSET = 48;
    public static final int REDUCE_OP_OFFSET = 52;
    public static final int COMPRESSION_OFFSET = 53;
    public static final int SERVERS_OFFSET = 54;
    public static final int ROOT_OFFSET = 56;
    public static final int COMPRESSION_PARAMETER_OFFSET = 60;
    /** The root field of a collective that has none. */
    public static final int NO_ROOT = -1;

    private static final ReduceOp[] OPS = ReduceOp.values();

    private ByteBuffer buffer;

    /**
     * Points this flyweight at the first {@link #LENGTH} bytes of {@code buffer} (absolute index 0)
     * and sets the buffer's byte order to little-endian.
     */
    public MessageHeader wrap(ByteBuffer buffer) {
        if (buffer.limit() < LENGTH) {
            throw new IllegalArgumentException("header needs " + LENGTH + " bytes, buffer's limit is "
                    + buffer.limit());
        }
        this.buffer = buffer.order(ByteOrder.LITTLE_ENDIAN);
        return this;
    }

    /**
     * Starts a header: magic, version and the message's own fields, with the checksum and the
     * settings zero ({@link #checksum(int)} and {@link #settings} set them). A header is written by
     * this, then {@link #call} and {@link #layout}, each once: three short steps rather than one
     * method of twelve parameters, the same stores.
     */
    public MessageHeader write(MessageKind kind, int senderRank, int messageIndex, int payloadBytes, int flags) {
        buffer.putInt(MAGIC_OFFSET, MAGIC);
        buffer.put(VERSION_OFFSET, (byte) VERSION);
        buffer.put(KIND_OFFSET, (byte) kind.code());
        buffer.put(FLAGS_OFFSET, (byte) flags);
        buffer.putInt(SENDER_RANK_OFFSET, senderRank);
        buffer.putInt(MESSAGE_INDEX_OFFSET, messageIndex);
        buffer.putInt(PAYLOAD_BYTES_OFFSET, payloadBytes);
        buffer.putInt(CHECKSUM_OFFSET, 0);
        // The reduce op's byte and the three of the settings after it, all zero until set.
        buffer.putInt(REDUCE_OP_OFFSET, 0);
        buffer.putInt(COMPRESSION_PARAMETER_OFFSET, 0);
        return this;
    }

    /**
     * Writes what the collective is: its sequence number, element type and count, reduce op
     * ({@link #opCode}) and root. After {@link #write}, which zeroes the settings beside the op.
     */
    public MessageHeader call(long sequence, int elementTypeCode, long elementCount, int reduceOpCode, int root) {
        buffer.putLong(SEQUENCE_OFFSET, sequence);
        buffer.put(ELEMENT_TYPE_OFFSET, (byte) elementTypeCode);
        buffer.putLong(ELEMENT_COUNT_OFFSET, elementCount);
        buffer.put(REDUCE_OP_OFFSET, (byte) reduceOpCode);
        buffer.putInt(ROOT_OFFSET, root);
        return this;
    }

    /** Writes the call's layout: its fingerprint and tensor count. */
    public MessageHeader layout(long fingerprint, int tensorCount) {
        buffer.putLong(FINGERPRINT_OFFSET, fingerprint);
        buffer.putInt(TENSOR_COUNT_OFFSET, tensorCount);
        return this;
    }

    /**
     * Writes the settings every rank must share (zero after {@link #write}): the compression's
     * code and parameter and the star's number of servers (1 to 65535).
     */
    public MessageHeader settings(int compressionCode, int compressionParameter, int servers) {
        buffer.put(COMPRESSION_OFFSET, (byte) compressionCode);
        buffer.putShort(SERVERS_OFFSET, (short) servers);
        buffer.putInt(COMPRESSION_PARAMETER_OFFSET, compressionParameter);
        return this;
    }

    /** Sets the checksum field, leaving every other field as it is. */
    public MessageHeader checksum(int checksum) {
        buffer.putInt(CHECKSUM_OFFSET, checksum);
        return this;
    }

    /**
     * The CRC32C of this header's bytes but the checksum field (first {@link #CHECKSUM_OFFSET}, then
     * from {@link #REDUCE_OP_OFFSET}) followed by bytes
     * {@code [from, to)} of {@code payload} (which may be the header's own buffer). Resets
     * {@code crc} first; leaves the position and limit of both buffers as they were.
     */
    public int computeChecksum(CRC32C crc, ByteBuffer payload, int from, int to) {
        crc.reset();
        update(crc, buffer, 0, CHECKSUM_OFFSET);
        update(crc, buffer, REDUCE_OP_OFFSET, LENGTH);
        update(crc, payload, from, to);
        return (int) crc.getValue();
    }

    /** Feeds bytes {@code [from, to)} through the buffer itself, not a duplicate: nothing allocated per message. */
    private static void update(CRC32C crc, ByteBuffer bytes, int from, int to) {
        int position = bytes.position();
        int limit = bytes.limit();
        bytes.limit(to).position(from);
        crc.update(bytes);
        bytes.limit(limit).position(position);
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

    public int flags() {
        return buffer.get(FLAGS_OFFSET) & 0xFF;
    }

    /** Whether {@link #FLAG_CHECKSUM} is set. */
    public boolean hasChecksum() {
        return (flags() & FLAG_CHECKSUM) != 0;
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

    /** The reduce op's code (see {@link #opCode}), 0 for none. */
    public int reduceOpCode() {
        return buffer.get(REDUCE_OP_OFFSET) & 0xFF;
    }

    /** The root rank, or {@link #NO_ROOT}. */
    public int root() {
        return buffer.getInt(ROOT_OFFSET);
    }

    /** The compression's code (see {@link io.ringstar.config.Compression.Kind#wireCode}). */
    public int compressionCode() {
        return buffer.get(COMPRESSION_OFFSET) & 0xFF;
    }

    /** The compression's parameter (the top-k fraction's float bits), or 0. */
    public int compressionParameter() {
        return buffer.getInt(COMPRESSION_PARAMETER_OFFSET);
    }

    /** The star's number of servers. */
    public int servers() {
        return buffer.getShort(SERVERS_OFFSET) & 0xFFFF;
    }

    /** The wire code of {@code op}: 1 + its position in {@link ReduceOp}, 0 for null (no reduction). */
    public static int opCode(ReduceOp op) {
        return op == null ? 0 : op.ordinal() + 1;
    }

    /** The op of a wire code, or {@code null} for 0 or a code no op has. */
    public static ReduceOp op(int code) {
        return code >= 1 && code <= OPS.length ? OPS[code - 1] : null;
    }

    /** The checksum field as written; meaningful only if {@link #hasChecksum()}. */
    public int checksum() {
        return buffer.getInt(CHECKSUM_OFFSET);
    }

    @Override
    public String toString() {
        return "MessageHeader{kind=" + kind() + ", elementType=" + elementTypeCode() + ", flags=" + flags()
                + ", sender=" + senderRank()
                + ", index=" + messageIndex() + ", sequence=" + sequence() + ", elements=" + elementCount()
                + ", tensors=" + tensorCount() + ", payloadBytes=" + payloadBytes() + ", op=" + op(reduceOpCode())
                + ", root=" + root() + ", compression=" + compressionCode() + "/"
                + Integer.toHexString(compressionParameter()) + ", servers=" + servers()
                + (hasChecksum() ? ", checksum=" + Integer.toHexString(checksum()) : "") + '}';
    }
}
