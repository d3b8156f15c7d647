package io.ringstar.testing;

import io.ringstar.Transport;
import io.ringstar.protocol.MessageHeader;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;

/**
 * A transport that flips one bit of one received message after the real transport has delivered
 * it, as a faulty NIC, switch or driver would: the {@code victim}-th message (0-based) from
 * {@code source} that carries a payload gets bit {@code bit} of byte {@code byteOf(length)}
 * inverted. Everything else passes through unchanged, so the sender computed its checksum over the
 * right bytes and only the receiver sees the wrong ones.
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

    private void maybeCorrupt(int srcRank, ByteBuffer dst, int start, int length) {
        if (srcRank == source && length > MessageHeader.LENGTH && payloadMessages.getAndIncrement() == victim) {
            int index = start + byteOf.applyAsInt(length);
            dst.put(index, (byte) (dst.get(index) ^ (1 << bit)));
            flips.incrementAndGet();
        }
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
    public void send(int destRank, ByteBuffer data) {
        delegate.send(destRank, data);
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        delegate.send(destRank, header, payload);
    }

    @Override
    public void recv(int srcRank, ByteBuffer dst) {
        int start = dst.position();
        delegate.recv(srcRank, dst);
        maybeCorrupt(srcRank, dst, start, dst.position() - start);
    }

    @Override
    public int recvAtMost(int srcRank, ByteBuffer dst, Duration timeout) {
        int start = dst.position();
        int length = delegate.recvAtMost(srcRank, dst, timeout);
        maybeCorrupt(srcRank, dst, start, length);
        return length;
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
