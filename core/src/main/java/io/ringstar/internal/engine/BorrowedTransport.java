package io.ringstar.internal.engine;

import io.ringstar.Deadline;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.spi.TransportProbe;
import java.nio.ByteBuffer;
import java.time.Duration;

/** What {@link Transports#borrowed} returns: every call but {@code close()} goes to the owner. */
public final class BorrowedTransport implements Transport {
    private final Transport owner;

    public BorrowedTransport(Transport owner) {
        this.owner = owner;
    }

    /**
     * The hooks of {@code transport} ({@link TransportProbe}), looking through borrowed ones to their
     * owner (the training loops lend their transport to each aggregator they make), or null.
     */
    public static TransportProbe probeOf(Transport transport) {
        Transport inner = transport;
        while (inner instanceof BorrowedTransport) {
            inner = ((BorrowedTransport) inner).owner;
        }
        return inner instanceof TransportProbe ? (TransportProbe) inner : null;
    }

    @Override
    public int rank() {
        return owner.rank();
    }

    @Override
    public int worldSize() {
        return owner.worldSize();
    }

    @Override
    public Duration timeout() {
        return owner.timeout();
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        owner.send(destRank, header, payload, deadline);
    }

    @Override
    public int receive(int srcRank, MessageHandler handler, Deadline deadline) {
        return owner.receive(srcRank, handler, deadline);
    }

    @Override
    public int sendAndReceive(int destRank, ByteBuffer header, ByteBuffer payload, int srcRank,
            MessageHandler handler, Deadline deadline) {
        return owner.sendAndReceive(destRank, header, payload, srcRank, handler, deadline);
    }

    @Override
    public void barrier() {
        owner.barrier();
    }

    /** Leaves the borrowed transport open; its owner closes it. */
    @Override
    public void close() {
    }
}
