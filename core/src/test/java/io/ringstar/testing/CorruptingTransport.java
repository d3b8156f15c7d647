package io.ringstar.testing;

import io.ringstar.Deadline;
import io.ringstar.Transport;
import io.ringstar.internal.protocol.MessageHeader;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;

/**
 * A transport that flips one bit of one received message on its way to the receiver, as a faulty
 * NIC, switch or driver would: the {@code victim}-th message (0-based) from {@code source} that
 * carries a payload gets bit {@code bit} of byte {@code byteOf(length)} inverted. The piece that
 * holds that byte is handed on as a corrupted copy; everything else passes through unchanged, so
 * the sender computed its checksum over the right bytes and only the receiver sees the wrong ones.
 */
public final class CorruptingTransport implements Transport {
    private final Transport delegate;
    private final int source;
    private final int victim;
    private final IntUnaryOperator byteOf;
    private final int bit;
    private final AtomicInteger payloadMessages = new AtomicInteger();
    private final AtomicInteger flips = new AtomicInteger();

    /**
     * @param byteOf the byte to corrupt, given the message's length; within the message
     * @param bit 0 (least significant) to 7
     */
    public CorruptingTransport(Transport delegate, int source, int victim, IntUnaryOperator byteOf, int bit) {
        this.delegate = delegate;
        this.source = source;
        this.victim = victim;
        this.byteOf = byteOf;
        this.bit = bit;
    }

    /** How many bits this transport has flipped: 1 once the victim message came through. */
    public int flips() {
        return flips.get();
    }

    @Override
    public int rank() {
        return delegate.rank();
    }

    @Override
    public int worldSize() {
        return delegate.worldSize();
    }

    @Override
    public Duration timeout() {
        return delegate.timeout();
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        delegate.send(destRank, header, payload, deadline);
    }

    @Override
    public int receive(int srcRank, MessageHandler handler, Deadline deadline) {
        if (srcRank != source) {
            return delegate.receive(srcRank, handler, deadline);
        }
        return delegate.receive(srcRank, new MessageHandler() {
            private int target = -1;

            @Override
            public void onStart(int length) {
                handler.onStart(length);
                if (length > MessageHeader.LENGTH && payloadMessages.getAndIncrement() == victim) {
                    target = byteOf.applyAsInt(length);
                }
            }

            @Override
            public void onBytes(ByteBuffer piece, int messageOffset) {
                int length = piece.remaining();
                if (target < messageOffset || target >= messageOffset + length) {
                    handler.onBytes(piece, messageOffset);
                    return;
                }
                ByteBuffer copy = ByteBuffer.allocate(length).order(piece.order());
                copy.put(0, piece, piece.position(), length);
                int index = target - messageOffset;
                copy.put(index, (byte) (copy.get(index) ^ (1 << bit)));
                flips.incrementAndGet();
                handler.onBytes(copy.asReadOnlyBuffer().order(piece.order()), messageOffset);
            }
        }, deadline);
    }

    @Override
    public void barrier() {
        delegate.barrier();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
