package io.ringstar.train;

import io.ringstar.CollectiveMismatchException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The messages of asynchronous parameter-server training, one transport message each: a fixed
 * 56-byte header, little-endian, followed by a payload.
 *
 * <pre>
 *  byte 0        4      5         8                16               24
 *       +--------+------+---------+----------------+----------------+
 *       | magic  | kind | 0 0 0   | version (long) | step (long)    |
 *       +--------+------+---------+----------------+----------------+
 *  24                    32                 40                 48             52         56
 *       +----------------+------------------+------------------+--------------+----------+
 *       | loss (double)  | commNanos (long) | busyNanos (long) | payload (int)| 0 0 0 0  |
 *       +----------------+------------------+------------------+--------------+----------+
 *  56   payload: {@code payload} bytes
 * </pre>
 *
 * <ul>
 *   <li>{@link #GRADIENT}, worker to server: the gradient (all parameter tensors' gradients as
 *       FLOAT values in parameter order, each tensor in 'c' order); {@code version} is the
 *       parameter version it was computed on, {@code step} the worker's step, {@code loss} its
 *       batch loss, {@code commNanos}/{@code busyNanos} the worker's time in messaging and in
 *       whole steps so far.</li>
 *   <li>{@link #START}, server to worker, first: the parameters to start from, in the same layout;
 *       {@code version} is their version (the number of gradients applied), {@code step} the step
 *       the worker starts at: 0, or when the server resumed from a checkpoint, the number of that
 *       worker's gradients it had applied.</li>
 *   <li>{@link #PARAMS}, server to worker: the parameters in the same layout; {@code version} is
 *       their version, {@code step} the worker step it answers.</li>
 *   <li>{@link #DONE}, worker to server: no payload; {@code step} is the worker's step count,
 *       the times are final.</li>
 *   <li>{@link #ABORT}, server to worker: the training failed; the payload is the reason in UTF-8.</li>
 * </ul>
 */
final class AsyncMessage {
    /** "RSAT" read as a little-endian int. */
    static final int MAGIC = 0x54415352;
    static final int HEADER_BYTES = 56;

    static final byte GRADIENT = 1;
    static final byte PARAMS = 2;
    static final byte DONE = 3;
    static final byte ABORT = 4;
    static final byte START = 5;

    /** A decoded header; the payload follows it in the same buffer. */
    record Header(byte kind, long version, long step, double loss, long commNanos, long busyNanos, int payloadBytes) {
    }

    private AsyncMessage() {
    }

    /** Longest ABORT reason sent, in UTF-8 bytes; longer reasons are cut. */
    static final int MAX_REASON_BYTES = 1024;

    /**
     * A buffer big enough for a header and {@code floats} values, or for any ABORT message (a
     * small model's buffer would otherwise be too short for the reason), in the wire byte order.
     */
    static ByteBuffer allocate(long floats) {
        long payload = Math.max(4 * floats, MAX_REASON_BYTES);
        return ByteBuffer.allocate(Math.toIntExact(HEADER_BYTES + payload)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Clears {@code buffer} and writes a header announcing {@code payloadBytes}; the payload goes next. */
    static void writeHeader(ByteBuffer buffer, byte kind, long version, long step, double loss, long commNanos,
            long busyNanos, int payloadBytes) {
        buffer.clear();
        buffer.putInt(MAGIC).put(kind).put((byte) 0).put((byte) 0).put((byte) 0).putLong(version).putLong(step)
                .putDouble(loss).putLong(commNanos).putLong(busyNanos).putInt(payloadBytes).putInt(0);
    }

    /** Appends floats to a buffer after its header. */
    static void putFloats(ByteBuffer buffer, float[] values) {
        buffer.asFloatBuffer().put(values);
        buffer.position(buffer.position() + 4 * values.length);
    }

    /** An ABORT message with {@code reason}, cut to {@link #MAX_REASON_BYTES}. */
    static ByteBuffer abort(String reason) {
        byte[] whole = reason.getBytes(StandardCharsets.UTF_8);
        // Cutting may split a multi-byte character; the reader decodes it as a replacement character.
        byte[] text = whole.length <= MAX_REASON_BYTES ? whole : java.util.Arrays.copyOf(whole, MAX_REASON_BYTES);
        ByteBuffer buffer = ByteBuffer.allocate(HEADER_BYTES + text.length).order(ByteOrder.LITTLE_ENDIAN);
        writeHeader(buffer, ABORT, -1, -1, Double.NaN, 0, 0, text.length);
        buffer.put(text).flip();
        return buffer;
    }

    /**
     * Reads the header of a received message of {@code length} bytes that starts at position 0 and
     * leaves the position at the payload.
     *
     * @throws CollectiveMismatchException naming the peer if the bytes are not a message of this format
     */
    static Header read(ByteBuffer buffer, int length, String operation, int rank, int peer) {
        if (length < HEADER_BYTES) {
            throw new CollectiveMismatchException(operation, rank, peer, "a " + length
                    + "-byte message is shorter than the " + HEADER_BYTES + "-byte header of async training");
        }
        buffer.position(0).limit(length);
        int magic = buffer.getInt();
        if (magic != MAGIC) {
            throw new CollectiveMismatchException(operation, rank, peer, String.format(
                    "magic 0x%08X is not that of async training (0x%08X); does the peer run the same mode?",
                    magic, MAGIC));
        }
        byte kind = buffer.get();
        buffer.position(8);
        Header header = new Header(kind, buffer.getLong(), buffer.getLong(), buffer.getDouble(), buffer.getLong(),
                buffer.getLong(), buffer.getInt());
        buffer.position(HEADER_BYTES);
        if (kind < GRADIENT || kind > START) {
            throw new CollectiveMismatchException(operation, rank, peer, "unknown message kind " + kind);
        }
        if (header.payloadBytes() != length - HEADER_BYTES) {
            throw new CollectiveMismatchException(operation, rank, peer, "the header announces "
                    + header.payloadBytes() + " payload bytes, the message carries " + (length - HEADER_BYTES));
        }
        return header;
    }

    /** The reason text of an ABORT message whose header was just read. */
    static String reason(ByteBuffer buffer, Header header) {
        byte[] text = new byte[header.payloadBytes()];
        buffer.get(text);
        return new String(text, StandardCharsets.UTF_8);
    }

    /** The payload floats of a message whose header was just read. */
    static float[] floats(ByteBuffer buffer, Header header, long expected, String operation, int rank, int peer) {
        if (header.payloadBytes() != 4 * expected) {
            throw new CollectiveMismatchException(operation, rank, peer, header.payloadBytes()
                    + " payload bytes, but the model has " + expected + " FLOAT parameters (" + 4 * expected
                    + " bytes); do all ranks train the same model?");
        }
        float[] values = new float[(int) expected];
        buffer.asFloatBuffer().get(values);
        return values;
    }
}
