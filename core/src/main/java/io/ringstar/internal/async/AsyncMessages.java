package io.ringstar.internal.async;

import io.ringstar.CollectiveMismatchException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The messages of the asynchronous parameter server, one transport message each: a fixed
 * {@value #HEADER_BYTES}-byte header, little-endian, then a payload.
 *
 * <pre>
 *  byte 0        4         5      6             8                16              24
 *       +--------+---------+------+-------------+----------------+---------------+
 *       | magic  | version | kind | servers u16 | version (long) | step (long)   |
 *       +--------+---------+------+-------------+----------------+---------------+
 *  24                     32                40              44                 48
 *       +-----------------+-----------------+---------------+------------------+
 *       | total (long)    | offset (long)   | payload (int) | failed rank (int)|
 *       +-----------------+-----------------+---------------+------------------+
 *  48                     56                64                      72
 *       +-----------------+-----------------+-----------------------+
 *       | max lead (long) | held back (long)| max gradient age(long)|
 *       +-----------------+-----------------+-----------------------+
 *  72   payload: {@code payload} bytes
 * </pre>
 *
 * {@code total} is the number of parameter elements and {@code offset} the first element of the
 * server's range ({@link ParameterPartition}); both are checked on every message that carries a
 * part. Parts are FLOAT values. The last three fields are the server's statistics so far, sent
 * with every reply. Kinds:
 * <ul>
 *   <li>{@link #START}, server to worker, first: the server's part of the parameters; {@code
 *       version} its version, {@code step} the worker's clock at that server (0, or after a
 *       resume the number of that worker's gradients it has applied).</li>
 *   <li>{@link #PUSH}, worker to server: the server's part of a gradient; {@code version} the
 *       server's version the gradient was computed on, {@code step} the worker's step.</li>
 *   <li>{@link #PULL}, worker to server, no payload: asks for the current part.</li>
 *   <li>{@link #PARAMS}, server to worker: the current part answering a PUSH or PULL; {@code step}
 *       echoes the request's step.</li>
 *   <li>{@link #FINISH}, worker to server, no payload: the worker is done after {@code step} steps.</li>
 *   <li>{@link #WAITING}, server to worker, no payload: the server still waits for other workers
 *       to finish and has applied updates since the last such message (so the worker's wait
 *       starts afresh).</li>
 *   <li>{@link #FINAL}, server to worker: the final part once every worker has finished.</li>
 *   <li>{@link #ABORT}, either way: the training failed; {@code failed rank} is the rank the
 *       failure is about, {@code step} the failure's type (1 a peer failed, 2 a timeout, 3 a
 *       mismatch, 0 other), the payload the reason in UTF-8.</li>
 * </ul>
 */
public final class AsyncMessages {
    /** "RSAP" read as a little-endian int. */
    public static final int MAGIC = 0x50415352;
    /**
     * This format's version. 2: an ABORT's failure kind is {@link io.ringstar.internal.protocol.FailureKind}'s
     * code, the collectives' numbering (version 1 numbered the kinds its own way).
     */
    public static final byte PROTOCOL_VERSION = 2;
    /** Bytes of the header. */
    public static final int HEADER_BYTES = 72;
    /** Longest ABORT reason sent, in UTF-8 bytes; longer reasons are cut. */
    public static final int MAX_REASON_BYTES = 1024;

    public static final byte START = 1;
    public static final byte PUSH = 2;
    public static final byte PULL = 3;
    public static final byte PARAMS = 4;
    public static final byte FINISH = 5;
    public static final byte WAITING = 6;
    public static final byte FINAL = 7;
    public static final byte ABORT = 8;

    private static final String[] NAMES = {"?", "START", "PUSH", "PULL", "PARAMS", "FINISH", "WAITING", "FINAL",
        "ABORT"};

    private AsyncMessages() {
    }

    /**
     * A decoded header; the payload follows it.
     *
     * @param kind one of the kinds above
     * @param servers the sender's number of servers
     * @param version a server's version (updates applied)
     * @param step a worker's step or clock
     * @param total the sender's number of parameter elements
     * @param offset the first element of the part
     * @param payloadBytes bytes after the header
     * @param failedRank ABORT: the rank the failure is about; -1 otherwise
     * @param maxLead the server's largest lead of a worker over the slowest when it was answered
     * @param heldBack the server's replies held back by the staleness bound
     * @param maxGradientAge the server's most updates applied between a gradient's version and its own
     */
    public record Header(byte kind, int servers, long version, long step, long total, long offset, int payloadBytes,
            int failedRank, long maxLead, long heldBack, long maxGradientAge) {
        /** A header of {@code kind} with no statistics and no failed rank. */
        public static Header of(byte kind, int servers, long version, long step, long total, long offset,
                int payloadBytes) {
            return new Header(kind, servers, version, step, total, offset, payloadBytes, -1, 0, 0, 0);
        }

        /** Writes this header into {@code buffer} from position 0 and flips it for sending. */
        public ByteBuffer writeTo(ByteBuffer buffer) {
            buffer.clear();
            buffer.putInt(MAGIC).put(PROTOCOL_VERSION).put(kind).putShort((short) servers).putLong(version)
                    .putLong(step).putLong(total).putLong(offset).putInt(payloadBytes).putInt(failedRank)
                    .putLong(maxLead).putLong(heldBack).putLong(maxGradientAge);
            return buffer.flip();
        }
    }

    /** The name of a kind, for messages. */
    public static String name(byte kind) {
        return kind >= START && kind <= ABORT ? NAMES[kind] : "unknown kind " + kind;
    }

    /** A little-endian buffer of {@code bytes}. */
    public static ByteBuffer allocate(long bytes) {
        return ByteBuffer.allocate(Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A receive buffer for a header and a part of {@code floats} values, or any ABORT message. */
    public static ByteBuffer receiveBuffer(int floats) {
        return allocate(HEADER_BYTES + Math.max(4L * floats, MAX_REASON_BYTES));
    }

    /**
     * An ABORT message (header and reason in one buffer) about {@code failedRank}; {@code step}
     * carries the failure's kind ({@link io.ringstar.internal.protocol.FailureKind#code()}), so the
     * receiver throws the same type.
     */
    public static ByteBuffer abort(int servers, int failedRank, long type, String reason) {
        byte[] whole = reason.getBytes(StandardCharsets.UTF_8);
        // Cutting may split a multi-byte character; the reader decodes it as a replacement character.
        byte[] text = whole.length <= MAX_REASON_BYTES ? whole : Arrays.copyOf(whole, MAX_REASON_BYTES);
        ByteBuffer buffer = allocate(HEADER_BYTES + text.length);
        new Header(ABORT, servers, -1, type, -1, -1, text.length, failedRank, 0, 0, 0).writeTo(buffer);
        buffer.limit(buffer.capacity()).position(HEADER_BYTES);
        buffer.put(text);
        return buffer.flip();
    }

    /** The reason of an ABORT message whose header {@link #read} just decoded. */
    public static String reason(ByteBuffer buffer, Header header) {
        byte[] text = new byte[header.payloadBytes()];
        buffer.get(HEADER_BYTES, text);
        return new String(text, StandardCharsets.UTF_8);
    }

    /**
     * Decodes the header of a received message of {@code length} bytes that starts at position 0,
     * checking the magic, the format's version, the kind, the number of servers and the payload
     * length (an ABORT is taken whatever its servers, so that its reason is seen).
     *
     * @throws CollectiveMismatchException naming the peer if the bytes are not such a message
     */
    public static Header read(ByteBuffer buffer, int length, int servers, String operation, int rank, int peer) {
        if (length < HEADER_BYTES) {
            throw new CollectiveMismatchException(operation, rank, peer, "a " + length
                    + "-byte message is shorter than the " + HEADER_BYTES + "-byte header of the async parameter "
                    + "server");
        }
        ByteBuffer in = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(0).limit(length);
        int magic = in.getInt();
        if (magic != MAGIC) {
            throw new CollectiveMismatchException(operation, rank, peer, String.format(
                    "magic 0x%08X is not that of the async parameter server (0x%08X); does the peer run it?",
                    magic, MAGIC));
        }
        byte format = in.get();
        if (format != PROTOCOL_VERSION) {
            throw new CollectiveMismatchException(operation, rank, peer, "async parameter server protocol version "
                    + format + ", this rank speaks " + PROTOCOL_VERSION);
        }
        Header header = new Header(in.get(), Short.toUnsignedInt(in.getShort()), in.getLong(), in.getLong(),
                in.getLong(), in.getLong(), in.getInt(), in.getInt(), in.getLong(), in.getLong(), in.getLong());
        if (header.kind() < START || header.kind() > ABORT) {
            throw new CollectiveMismatchException(operation, rank, peer, "unknown message kind " + header.kind());
        }
        if (header.payloadBytes() != length - HEADER_BYTES) {
            throw new CollectiveMismatchException(operation, rank, peer, "the header announces "
                    + header.payloadBytes() + " payload bytes, the message carries " + (length - HEADER_BYTES));
        }
        if (header.kind() != ABORT && header.servers() != servers) {
            throw new CollectiveMismatchException(operation, rank, peer, "the peer runs with " + header.servers()
                    + " servers, this rank with " + servers + "; give every rank the same option servers");
        }
        return header;
    }

    /**
     * Checks that a message carries the part {@code [offset, offset + floats)} of {@code total}
     * parameters.
     *
     * @throws CollectiveMismatchException naming both sides' values if not
     */
    public static void checkPart(Header header, long total, long offset, int floats, String operation, int rank,
            int peer) {
        if (header.total() != total) {
            throw new CollectiveMismatchException(operation, rank, peer, "the peer has " + header.total()
                    + " parameter elements, this rank " + total + "; do all ranks train the same model?");
        }
        if (header.offset() != offset || header.payloadBytes() != 4L * floats) {
            throw new CollectiveMismatchException(operation, rank, peer, "a " + name(header.kind()) + " of "
                    + header.payloadBytes() / 4 + " elements from " + header.offset() + ", expected " + floats
                    + " from " + offset);
        }
    }

    /** Copies the payload floats of a message whose header was just read into {@code to} from {@code at}. */
    public static void getFloats(ByteBuffer buffer, Header header, float[] to, int at) {
        buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(HEADER_BYTES)
                .limit(HEADER_BYTES + header.payloadBytes()).asFloatBuffer().get(to, at, header.payloadBytes() / 4);
    }
}
