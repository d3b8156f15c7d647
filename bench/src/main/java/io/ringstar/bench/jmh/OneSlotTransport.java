package io.ringstar.bench.jmh;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * Two ranks that pass messages through one shared slot, on the caller's thread: a send fills the
 * slot, the next receive empties it. For measuring what the collectives do per message around the
 * transport (headers, checks) without any transport cost but one copy each way. Nothing blocks: a
 * receive from an empty slot, or a send to a full one, fails at once. Not thread-safe.
 */
final class OneSlotTransport implements Transport {
    private final int rank;
    private final Slot slot;

    private static final class Slot {
        final ByteBuffer bytes;
        boolean full;

        Slot(int capacity) {
            bytes = ByteBuffer.allocateDirect(capacity);
        }
    }

    private OneSlotTransport(int rank, Slot slot) {
        this.rank = rank;
        this.slot = slot;
    }

    /** Ranks 0 and 1 over one slot of {@code capacity} bytes; element r is rank r. */
    static Transport[] pair(int capacity) {
        Slot slot = new Slot(capacity);
        return new Transport[] {new OneSlotTransport(0, slot), new OneSlotTransport(1, slot)};
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int worldSize() {
        return 2;
    }

    @Override
    public void send(int destRank, ByteBuffer data) {
        fill().put(data.duplicate()).flip();
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        fill().put(header.duplicate()).put(payload.duplicate()).flip();
    }

    private ByteBuffer fill() {
        if (slot.full) {
            throw new IllegalStateException("rank " + rank + " sends while the slot still holds a message");
        }
        slot.full = true;
        return slot.bytes.clear();
    }

    @Override
    public void recv(int srcRank, ByteBuffer dst) {
        if (slot.full && slot.bytes.remaining() != dst.remaining()) {
            throw new CollectiveMismatchException("recv", rank, srcRank, "the slot holds " + slot.bytes.remaining()
                    + " bytes, the buffer expects " + dst.remaining());
        }
        recvAtMost(srcRank, dst, Duration.ZERO);
    }

    @Override
    public int recvAtMost(int srcRank, ByteBuffer dst, Duration timeout) {
        if (!slot.full) {
            throw new CollectiveTimeoutException("recv", rank, srcRank, "the slot is empty");
        }
        int length = slot.bytes.remaining();
        if (length > dst.remaining()) {
            throw new CollectiveMismatchException("recv", rank, srcRank, "the slot holds " + length
                    + " bytes, the buffer takes at most " + dst.remaining());
        }
        dst.put(slot.bytes);
        slot.full = false;
        return length;
    }

    @Override
    public void barrier() {
        // Two ranks on one thread are always at the same point.
    }

    @Override
    public void close() {
        // Holds nothing but a heap object and its direct buffer, which the collector frees.
    }
}
