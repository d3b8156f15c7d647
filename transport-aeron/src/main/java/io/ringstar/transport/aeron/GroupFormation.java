package io.ringstar.transport.aeron;

import io.aeron.Subscription;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.spi.MessageCopy;
import io.ringstar.spi.NetworkSettings;
import io.ringstar.spi.SameHost;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * Forms an {@link AeronTransport}'s group, in three steps. {@link #bind} binds this rank's UDP
 * endpoint ({@link Streams}) and, on rank 0, the listener at the coordinator address; that is the
 * first step of a two-step open. {@link #form} then meets the other ranks there ({@link Coordinator}
 * on rank 0, {@link Rendezvous} on the others), keeps the rendezvous connections as the
 * {@link Sentinels}, and makes a channel per peer from rank 0's table. After the transport's
 * {@code start}, {@link #confirm} waits until every stream is connected, says READY on each, and
 * waits until every peer has said the same. Used by one thread at a time: the binding thread, then
 * the joining one.
 */
final class GroupFormation {
    private final AeronTransport transport;
    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final AeronSettings settings;
    private final DriverHandle driver;
    private final Streams streams;
    /** The transport's channels, by peer, which {@link #form} fills. */
    private final AeronChannel[] peers;
    /** One poll of every stream, which the waits below run under the I/O lock. */
    private final Runnable pollAll;
    private InetSocketAddress udpEndpoint;
    /** What this rank tells the others, once {@link #bind} has bound its UDP endpoint. */
    private Rendezvous.Endpoint self;
    /** Rank 0: the listener at the coordinator address, from {@link #bind} until the rendezvous ends. */
    private ServerSocketChannel coordinatorListener;
    /** Ranks of the table (this one included) on this host, and their media drivers if they have several. */
    private int busyThreadsOnThisHost;
    /** Element r: rank r advertised this host's address or this rank's driver (the shared-memory hint). */
    private final boolean[] sameHost;

    GroupFormation(AeronTransport transport, int rank, int worldSize, Duration timeout, AeronSettings settings,
            DriverHandle driver, AeronChannel[] peers, Subscription[] subscriptions) {
        this.transport = transport;
        this.rank = rank;
        this.worldSize = worldSize;
        this.timeout = timeout;
        this.settings = settings;
        this.sameHost = new boolean[worldSize];
        this.driver = driver;
        this.peers = peers;
        this.streams = new Streams(transport, rank, worldSize, timeout, settings, driver, subscriptions);
        this.pollAll = () -> transport.progress(0);
    }

    /**
     * After {@link #form}: the ranks on this host (this one included), by the table's advertised
     * hosts and driver ids, and the media drivers they use when there are several (UDP between
     * them); what the spin rule counts.
     */
    int busyThreadsOnThisHost() {
        return busyThreadsOnThisHost;
    }

    /** Whether {@code peer} advertised this host's address or this rank's media driver, once the group formed. */
    boolean sameHost(int peer) {
        return sameHost[peer];
    }

    /** Where this rank receives UDP, once {@link #bind} has bound it. */
    InetSocketAddress udpEndpoint() {
        return udpEndpoint;
    }

    /**
     * Where the others find this rank, once {@link #bind} has bound it: rank 0's listener at the
     * coordinator address, another rank's UDP endpoint; {@code host:port}.
     */
    String address() {
        InetSocketAddress where = coordinatorListener != null
                ? (InetSocketAddress) coordinatorListener.socket().getLocalSocketAddress() : udpEndpoint;
        return NetworkSettings.hostPort(where.getAddress(), where.getPort());
    }

    /**
     * Binds this rank's streams and, on rank 0, listens at the coordinator address (port 0: any
     * free one). Ranks that register before {@link #form} wait for rank 0 there.
     *
     * @throws CollectiveTimeoutException if the driver did not bind the streams by the deadline
     * @throws CollectiveException if rank 0 cannot listen at the coordinator address
     */
    void bind(Deadline deadline) {
        long until = System.nanoTime() + deadline.remainingNanos();
        int port = streams.bind(until);
        udpEndpoint = new InetSocketAddress(settings.bindAddress(), port);
        self = new Rendezvous.Endpoint(settings.jobId(), worldSize, rank, settings.bindAddress().getHostAddress(),
                port, streams.sessionBase(), driver.driverId());
        if (rank == 0) {
            coordinatorListener = Coordinator.listen(new InetSocketAddress(settings.coordinatorAddress(),
                    settings.coordinatorPort()));
        }
    }

    /** Rank 0: stops listening at the coordinator address, if {@link #form} has not; for a close before it. */
    void closeListener() {
        if (coordinatorListener != null) {
            try {
                coordinatorListener.close();
            } catch (IOException e) {
                // Closing a listener fails only if it is gone already.
            }
        }
    }

    /**
     * Once {@link #bind} has bound the streams: meets the others at the rendezvous and makes the channels.
     *
     * @return the sentinels, which the caller owns from here on
     * @throws CollectiveTimeoutException if the group did not meet by the deadline
     * @throws CollectiveException if rank 0 refused this rank, or the driver failed
     */
    Sentinels form(Deadline deadline) {
        long until = System.nanoTime() + deadline.remainingNanos();
        InetSocketAddress coordinator = new InetSocketAddress(settings.coordinatorAddress(),
                settings.coordinatorPort());
        Rendezvous.Formed formed = rank == 0 ? Coordinator.coordinate(coordinatorListener, settings.secret(), self,
                until) : Rendezvous.register(coordinator, settings.secret(), self, until);
        Sentinels sentinels;
        try {
            sentinels = new Sentinels(rank, formed.connections());
        } catch (IOException e) {
            for (SocketChannel connection : formed.connections()) {
                closeQuietly(connection);
            }
            throw new CollectiveException("rendezvous", rank, CollectiveException.NO_RANK,
                    "cannot keep the rendezvous connections: " + e, e);
        }
        int ranksOnThisHost = 0;
        Set<String> drivers = new HashSet<>();
        for (Rendezvous.Endpoint endpoint : formed.table().endpoints()) {
            if (SameHost.hosts(self.host(), endpoint.host()) || self.driverId().equals(endpoint.driverId())) {
                ranksOnThisHost++;
                drivers.add(endpoint.driverId());
                if (endpoint.rank() >= 0 && endpoint.rank() < worldSize) {
                    sameHost[endpoint.rank()] = true;
                }
            }
        }
        // Drivers of their own send and receive the ranks' UDP: each needs a core as much as a rank.
        // One driver that every rank here shares carries IPC only, whose bytes the ranks move
        // themselves: counting it made two IPC ranks on 2 cores stop spinning, and slower.
        busyThreadsOnThisHost = ranksOnThisHost + (drivers.size() > 1 ? drivers.size() : 0);
        try {
            streams.connect(formed.table(), peers);
        } catch (RuntimeException | Error e) {
            // Not started yet, so the transport's close says no BYE: the sentinels just close, as they would there.
            sentinels.close();
            throw e;
        }
        return sentinels;
    }

    /**
     * Once the transport has started its channels: waits until every publication has a subscriber
     * and every peer's image is here, says READY to every peer, and waits for every peer's READY.
     *
     * @throws CollectiveTimeoutException naming the ranks whose streams did not connect or confirm
     * @throws PeerFailureException if a peer failed meanwhile
     */
    void confirm(Deadline deadline) {
        List<Integer> missing = awaitAll(peer -> peer.streams.hasImage() && peer.streams.publicationConnected(),
                deadline);
        if (!missing.isEmpty()) {
            throw new CollectiveTimeoutException("rendezvous", rank, missing.get(0), "the Aeron streams with ranks "
                    + missing + " did not connect within the timeout of " + timeout);
        }
        transport.withIoLock(() -> {
            for (AeronChannel peer : peers) {
                if (peer != null) {
                    peer.writeFrame(PeerStreams.READY, 0, MessageCopy.NO_BYTES, MessageCopy.NO_BYTES, deadline);
                }
            }
        });
        missing = awaitAll(peer -> peer.streams.ready(), deadline);
        if (!missing.isEmpty()) {
            throw new CollectiveTimeoutException("rendezvous", rank, missing.get(0), "ranks " + missing
                    + " did not confirm their Aeron streams within the timeout of " + timeout);
        }
    }

    /**
     * Polls (taking the I/O lock for each round) until {@code done} holds for every peer or the
     * deadline passes; a failed peer fails the set-up at once.
     *
     * @return the peers for which it does not hold at the deadline
     */
    private List<Integer> awaitAll(Predicate<AeronChannel> done, Deadline deadline) {
        while (true) {
            transport.withIoLock(pollAll);
            List<Integer> missing = new ArrayList<>();
            for (AeronChannel peer : peers) {
                if (peer == null) {
                    continue;
                }
                if (peer.failure() != null) {
                    throw new PeerFailureException("rendezvous", rank, peer.peer(), peer.failure());
                }
                if (!done.test(peer)) {
                    missing.add(peer.peer());
                }
            }
            if (missing.isEmpty() || deadline.passed()) {
                return missing;
            }
            LockSupport.parkNanos(100_000);
        }
    }

    private static void closeQuietly(SocketChannel socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException e) {
                // Closing only fails for a socket already gone.
            }
        }
    }
}
