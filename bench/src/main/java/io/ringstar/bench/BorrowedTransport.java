package io.ringstar.bench;

import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * A transport lent to an aggregator that must not close it: the benchmark runs its algorithms one
 * after the other over the same connections and closes them itself at the end.
 */
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
