package io.ringstar.transport.inproc;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.spi.TransportChecks;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Ranks as threads of one JVM: each message is copied into a queue that belongs to the pair of
 * ranks, so {@link #send} returns at once (until 64 MiB wait on one link, the back-pressure bound)
 * and {@link #recv} copies the message out. Used to test the algorithms, to benchmark them without
 * a network, and by jobs that run all ranks in one process.
 *
 * <p>Make a group with {@link #createGroup(int, Duration)}, or open one rank at a time with
 * {@link io.ringstar.Transports#open} and transport name {@code "inproc"}: ranks of one JVM that
 * give the same coordinator address form one group. Closing a rank makes its peers' waits on it
 * fail with {@link io.ringstar.PeerFailureException}, as a dead process would.
 */
public final class InProcessTransport implements Transport {
    /** The payload of a single-buffer send; never written, and transports never move a sent buffer's position. */
    private static final ByteBuffer NO_PAYLOAD = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final InProcessGroup group;
    private final int rank;
    private final Runnable onClose;
    private volatile boolean closed;

    InProcessTransport(InProcessGroup group, int rank, Runnable onClose) {
        this.group = group;
        this.rank = rank;
        this.onClose = onClose;
    }

    /** A group of {@code worldSize} transports, element {@code r} for rank {@code r}, with the default timeout. */
    public static List<Transport> createGroup(int worldSize) {
        return createGroup(worldSize, DistributedConfig.DEFAULT_TIMEOUT);
    }

    /**
     * A group of {@code worldSize} transports, element {@code r} for rank {@code r}; every wait of
     * theirs lasts at most {@code timeout}. The caller owns them and closes each.
     */
    public static List<Transport> createGroup(int worldSize, Duration timeout) {
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be at least 1, was " + worldSize);
        }
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        InProcessGroup group = new InProcessGroup(worldSize, timeout);
        List<Transport> transports = new ArrayList<>(worldSize);
        for (int rank = 0; rank < worldSize; rank++) {
            group.join(rank);
            transports.add(new InProcessTransport(group, rank, () -> { }));
        }
        return Collections.unmodifiableList(transports);
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int worldSize() {
        return group.worldSize;
    }

    @Override
    public void send(int destRank, ByteBuffer data) {
        send(destRank, data, NO_PAYLOAD);
    }

    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        checkPeer("send", destRank);
        group.send(rank, destRank, header, payload);
    }

    @Override
    public void recv(int srcRank, ByteBuffer dst) {
        checkPeer("recv", srcRank);
        group.recv(rank, srcRank, dst, true, group.timeout);
    }

    @Override
    public int recvAtMost(int srcRank, ByteBuffer dst, Duration timeout) {
        checkPeer("recv", srcRank);
        return group.recv(rank, srcRank, dst, false, timeout);
    }

    @Override
    public void barrier() {
        checkOpen("barrier");
        group.barrier(rank);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (group.close(rank)) {
            onClose.run();
        }
    }

    private void checkPeer(String operation, int peer) {
        checkOpen(operation);
        TransportChecks.checkPeer(operation, rank, group.worldSize, peer);
    }

    private void checkOpen(String operation) {
        TransportChecks.checkOpen(closed, operation, rank);
    }

    @Override
    public String toString() {
        return "InProcessTransport{rank=" + rank + ", worldSize=" + group.worldSize + '}';
    }
}
