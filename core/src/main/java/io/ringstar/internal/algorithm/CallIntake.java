package io.ringstar.internal.algorithm;

import io.ringstar.Transport;
import io.ringstar.config.Compression;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.Reduction;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Taking one message in, as the transport's {@link Transport.MessageHandler}: gathering the
 * header, having it checked ({@link CallHeaders}) before any payload byte is believed, and then
 * combining (with the call's reduce op) or copying the payload into the algorithm's buffer as the
 * pieces arrive, keeping the bytes of an element a piece ended inside of for the next piece; or,
 * where a message must be seen whole (the checksum on, an abort notice), gathering it first. The
 * receiving half of {@link CollectiveCall}, which extends it, owns it and sets the message
 * expected before each receive: a superclass rather than a field, so that the per-piece code
 * reaches this state as directly as when it was one class. Not thread-safe: one receive at a time.
 */
abstract class CallIntake extends CallHeaders implements Transport.MessageHandler {
    /** What a receive does with the payload. */
    enum Action { NONE, COPY, COMBINE }

    private enum Mode { HEADER, STREAM, COLLECT }

    /** A whole message, where one must be seen whole: with the checksum on, and abort notices. */
    private final ByteBuffer collected;
    /** The bytes of an element that a piece ended inside of. */
    private final ByteBuffer carry = ByteBuffer.allocateDirect(Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private int carryHave;

    // ---- the receive under way, set by CollectiveCall ----
    Action action;
    ByteBuffer target;
    int targetOffset;
    /**
     * The other operand of a combination: the target itself, or where its values come from, read
     * from {@link #operandOffset} as the target is written from {@link #targetOffset}.
     */
    ByteBuffer operand;
    int operandOffset;
    int divisor;
    private int messageLength;
    private Mode mode;

    /** @param collectBytes the longest message this rank gathers whole */
    CallIntake(int rank, int worldSize, boolean checksummed, int servers, Compression compression, int collectBytes) {
        super(rank, worldSize, checksummed, servers, compression);
        this.collected = ByteBuffer.allocateDirect(collectBytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public void onStart(int length) {
        if (length < MessageHeader.LENGTH) {
            throw notRingstar(length);
        }
        messageLength = length;
        carryHave = 0;
        if (checksummed) {
            startCollecting();
        } else {
            mode = Mode.HEADER;
        }
    }

    private void startCollecting() {
        if (messageLength > collected.capacity()) {
            throw fail(mismatch("message " + messageIndex + " from rank " + src + " is " + messageLength
                    + " bytes, more than the " + collected.capacity() + " this rank takes for it; expected "
                    + (MessageHeader.LENGTH + payloadBytes)));
        }
        mode = Mode.COLLECT;
    }

    @Override
    public void onBytes(ByteBuffer piece, int messageOffset) {
        if (mode == Mode.COLLECT) {
            collect(piece, messageOffset);
            return;
        }
        int at = piece.position();
        int end = piece.limit();
        int offset = messageOffset;
        if (mode == Mode.HEADER) {
            int take = Math.min(MessageHeader.LENGTH - offset, end - at);
            incomingHeader.put(offset, piece, at, take);
            at += take;
            offset += take;
            if (offset < MessageHeader.LENGTH) {
                return;
            }
            incoming.wrap(incomingHeader);
            if (incoming.kindCode() == MessageKind.ABORT.code() || incoming.hasChecksum()) {
                // An abort notice, or (without the checksum here) a message that carries one: see it whole.
                if (messageLength <= collected.capacity()) {
                    collected.put(0, incomingHeader, 0, MessageHeader.LENGTH);
                    mode = Mode.COLLECT;
                    if (at < end) {
                        piece.position(at);
                        collect(piece, offset);
                    } else if (messageLength == MessageHeader.LENGTH) {
                        finishCollected();
                    }
                    return;
                }
            }
            check(messageLength, null);
            mode = Mode.STREAM;
        }
        if (at < end) {
            apply(piece, at, end, offset - MessageHeader.LENGTH);
        }
    }

    /** Copies a piece of a message that must be seen whole; checks and applies it at its end. */
    private void collect(ByteBuffer piece, int messageOffset) {
        int count = piece.remaining();
        collected.put(messageOffset, piece, piece.position(), count);
        if (messageOffset + count == messageLength) {
            finishCollected();
        }
    }

    private void finishCollected() {
        incoming.wrap(collected);
        try {
            if (incoming.hasChecksum()) {
                verifyChecksum(collected, messageLength);
            }
            check(messageLength, collected);
            if (action == Action.COMBINE) {
                Reduction.combine(op, type, target, targetOffset, operand, operandOffset, collected,
                        MessageHeader.LENGTH, payloadBytes / type.bytes(), divisor);
            } else if (action == Action.COPY) {
                Reduction.copy(target, targetOffset, collected, MessageHeader.LENGTH, payloadBytes);
            }
        } finally {
            incoming.wrap(incomingHeader);
        }
    }

    /**
     * Adds or copies bytes {@code [at, end)} of the piece, which are payload bytes from
     * {@code payloadOffset}.
     */
    private void apply(ByteBuffer piece, int at, int end, int payloadOffset) {
        if (action == Action.COPY) {
            Reduction.copy(target, targetOffset + payloadOffset, piece, at, end - at);
            return;
        }
        if (action != Action.COMBINE) {
            return;
        }
        int size = type.bytes();
        int position = payloadOffset;
        if (carryHave > 0) {
            int take = Math.min(size - carryHave, end - at);
            carry.put(carryHave, piece, at, take);
            carryHave += take;
            at += take;
            position += take;
            if (carryHave < size) {
                return;
            }
            Reduction.combine(op, type, target, targetOffset + position - size, operand,
                    operandOffset + position - size, carry, 0, 1, divisor);
            carryHave = 0;
        }
        int whole = (end - at) / size;
        if (whole > 0) {
            Reduction.combine(op, type, target, targetOffset + position, operand, operandOffset + position, piece,
                    at, whole, divisor);
            at += whole * size;
        }
        if (at < end) {
            carryHave = end - at;
            carry.put(0, piece, at, carryHave);
        }
    }
}
