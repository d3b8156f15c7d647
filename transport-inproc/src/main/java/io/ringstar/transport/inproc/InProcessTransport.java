package io.ringstar.transport.inproc;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.spi.PeerChannel;
import io.ringstar.spi.PeerTransport;
import io.ringstar.spi.WaitSchedule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Ranks as threads of one JVM. A send copies the message once, straight into the receiving rank's
 * {@link io.ringstar.spi.Inbox} for this sender, and wakes the receiver if it waits; a receive hands
 * the message to its handler as views of that inbox, so the algorithms reduce straight out of it.
 * A send waits only while 64 MiB from it wait in the receiver's inbox (128 MiB while the receiver
 * is itself sending to it), the back-pressure bound. Used to test the algorithms, to benchmark
 * them without a network, and by jobs that run all ranks in one process.
 *
 * <p>Make a group with {@link #createGroup(int, Duration)}, or open one rank at a time with
 * {@link io.ringstar.Transports#open} and transport name {@code "inproc"}: ranks of one JVM that
 * give the same coordinator address form one group. Closing a rank says goodbye to its peers, so
 * their waits on it fail with {@link io.ringstar.PeerFailureException}, as a dead process's would.
 * Waiting spins (unless the group has more ranks than the JVM has cores), yields and then parks
 * until a peer's send or goodbye wakes it (see {@link PeerTransport}); there is no background
 * thread. A status query ({@link io.ringstar.spi.TransportProbe#askStatus}) reads the peers' status
 * directly, with no record.
 */
public final class InProcessTransport extends PeerTransport {
    /** The name {@link io.ringstar.Transports#open} finds this transport by. */
    public static final String NAME = "inproc";
    /** Bytes from one sender that may wait in a receiver's inbox before the sender waits. */
    static final long RECEIVE_BUFFER_BYTES = 64L << 20;

    private final InProcessGroup group;
    private final Runnable onClose;
    private final WaitSchedule waitSchedule;

    InProcessTransport(InProcessGroup group, int rank, Runnable onClose) {
        super(NAME, rank, group.worldSize, group.timeout);
        this.group = group;
        this.onClose = onClose;
        PeerChannel[] channels = new PeerChannel[group.worldSize];
        for (int peer = 0; peer < channels.length; peer++) {
            if (peer != rank) {
                channels[peer] = new InProcessChannel(this, group, peer);
            }
        }
        // Every rank is a thread of this process.
        this.waitSchedule = WaitSchedule.choose(WAIT_SPIN_AUTO, group.worldSize);
        start(channels, waitSchedule);
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
            InProcessTransport transport = new InProcessTransport(group, rank, () -> { });
            group.join(rank, transport);
            transports.add(transport);
        }
        return Collections.unmodifiableList(transports);
    }

    /** How this rank's waits spin, yield and block, as chosen at its start. */
    WaitSchedule waitSchedule() {
        return waitSchedule;
    }

    /** The channel to {@code peer}, for a sending peer's channel that writes into its inbox. */
    PeerChannel channel(int peer) {
        return channelOf(peer);
    }

    /** See {@link PeerTransport#releaseIoForAWhile}. */
    int letGoOfIo() {
        return releaseIoForAWhile();
    }

    void takeBackIo(int holds) {
        retakeIo(holds);
    }

    /** Takes this rank's I/O lock for a peer that writes into one of its inboxes. */
    void lockForPeer() {
        lockIo();
    }

    void unlockForPeer() {
        unlockIo();
    }

    /**
     * Reads the peer's status straight from its transport: a status query record would wait for an
     * answer nobody gives, since this transport has no background reader and its peers write into
     * its inboxes on their own threads, never at a safe point of its own.
     */
    @Override
    protected long statusWithoutAsking(int peer) {
        InProcessTransport other = group.member(peer);
        return other == null || other.isClosed() ? NO_ANSWER : other.statusToAnswer();
    }

    @Override
    protected int progress(long blockNanos) {
        // Peers write into this rank's inboxes themselves: there is nothing to read.
        return 0;
    }

    @Override
    protected void wakeUp() {
    }

    @Override
    protected boolean parksOutsideIo() {
        return true;
    }

    @Override
    protected boolean readsInBackground() {
        return false;
    }

    @Override
    protected void release(boolean othersMayBeInside) {
        if (group.close(rank())) {
            onClose.run();
        }
    }
}
