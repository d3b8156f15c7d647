package io.ringstar.bench.jmh;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * Two ranks that pass messages through one shared slot, on the caller's thread: a send fills the
 * slot (one copy), the next receive hands it to its handler as one read-only view. For measuring
 * what the collectives do per message around the transport (headers, checks) without any
 * transport cost but that copy. Nothing blocks: a receive from an empty slot, or a send to a full
 * one, fails at once. Not thread-safe.
 */
final class OneSlotTransport implements Transport {
    private final int rank;
    private final Slot slot;

    private static final class Slot {
        final ByteBuffer bytes;
        final ByteBuffer view;
        boolean full;

        Slot(int capacity) {
            bytes = ByteBuffer.allocateDirect(capacity);
            view = bytes.asReadOnlyBuffer();
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
    public Duration timeout() {
        return Duration.ofDays(1);
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        if (slot.full) {
            throw new IllegalStateException("rank " + rank + " sends while the slot still holds a message");
        }
        slot.full = true;
        int length = header.remaining() + payload.remaining();
        slot.bytes.clear().put(0, header, header.position(), header.remaining())
                .put(header.remaining(), payload, payload.position(), payload.remaining()).limit(length);
    }

    @Override
    public int receive(int srcRank, MessageHandler handler, Deadline deadline) {
        if (!slot.full) {
            throw new CollectiveTimeoutException("recv", rank, srcRank, "the slot is empty");
        }
        int length = slot.bytes.limit();
        handler.onStart(length);
        slot.full = false;
        if (length > 0) {
            ByteBuffer view = slot.view.limit(length).position(0);
            try {
                handler.onBytes(view, 0);
            } finally {
                view.limit(0);
            }
        }
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
