package io.ringstar;

import java.nio.ByteBuffer;
import java.time.Duration;

/** What {@link Transports#borrowed} returns: every call but {@code close()} goes to the owner. */
final class BorrowedTransport implements Transport {
    private final Transport owner;

    BorrowedTransport(Transport owner) {
        this.owner = owner;
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
    public void send(int destRank, ByteBuffer data) {
        owner.send(destRank, data);
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        owner.send(destRank, header, payload);
    }

    @Override
    public void recv(int srcRank, ByteBuffer dst) {
        owner.recv(srcRank, dst);
    }

    @Override
    public int recvAtMost(int srcRank, ByteBuffer dst, Duration timeout) {
        return owner.recvAtMost(srcRank, dst, timeout);
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
