package io.ringstar.transport.aeron;

import io.aeron.ChannelUri;
import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.spi.NetworkOptions;
import io.ringstar.spi.TransportChecks;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.agrona.concurrent.IdleStrategy;

/**
 * Aeron between processes: IPC between ranks that share a media driver, UDP unicast between the
 * others. One instance per rank.
 *
 * <p><b>Media driver.</b> By default each rank embeds its own driver (threading
 * {@value #THREADING_OPTION}, shared by default; idle strategy {@value #IDLE_OPTION}, back-off by
 * default), in a directory under {@code /dev/shm} (or {@value #DIR_ROOT_OPTION}) named with the job
 * id, the rank and the pid; {@link #close()} stops it and removes the directory, and opening a
 * transport removes the directories of such drivers whose process is gone. With
 * {@value #DIR_OPTION} the rank uses the external driver running in that directory instead (see
 * {@link SharedMediaDriver}); ranks on one host that name the same running driver talk over
 * {@code aeron:ipc}, all other pairs over UDP.
 *
 * <p><b>Forming the group.</b> The constructor blocks until this rank's streams to and from every
 * other rank are connected, or fails after the configuration's timeout naming the ranks that
 * never came. The ranks meet over TCP at {@link DistributedConfig#coordinatorAddr()}
 * ({@link Rendezvous}), start-up order free, with the same handshake as the Netty transport: magic,
 * version, job id ({@value #JOB_ID_OPTION}), world size, rank, and an optional shared secret
 * (option {@value #SECRET_OPTION}, a file named by {@value #SECRET_FILE_OPTION}, or the environment
 * variable {@value #SECRET_ENV}) proved without sending it. Rank 0 then hands out every rank's UDP
 * endpoint ({@value #BIND_OPTION}, {@value #PORT_OPTION}), driver identity, and the session ids it
 * takes. A rank subscribes to exactly those sessions of its peers, so its media driver drops any
 * other stream sent to its port (a stranger's) without reading it. Without a secret, the first rank
 * of a process to open logs a WARNING that the job is unauthenticated. Every socket binds the
 * given address, never the wildcard: the UDP endpoint, and the sockets Aeron sends from, which it
 * connects to the peer (bound to the route's source address). The data frames themselves are not
 * authenticated: the secret keeps off-path strangers out, not someone who can read and forge
 * packets on the path.
 *
 * <p><b>Data.</b> A message goes as a 16-byte {@link ChunkHeader} and its bytes, cut into chunks
 * of one Aeron frame ({@value #MTU_OPTION}), each written straight into the term with
 * {@code tryClaim}; chunks longer than a frame ({@value #CHUNK_BYTES_OPTION}) go through
 * {@code offer}. {@code send} copies the caller's bytes into the term and returns; while the term
 * is full it waits with the idle strategy, at most the timeout. A receiver thread per rank copies
 * what arrives into per-peer queues, at most {@value #RECEIVE_BUFFER_OPTION} bytes per peer
 * ({@value #DEFAULT_RECEIVE_BUFFER_BYTES} by default) before it stops reading that peer; while
 * this rank is itself sending to that peer it reads on up to twice that, so that two ranks that
 * both send before they receive do not hold each other back (ones that both send more than twice
 * the other's buffer do, until the timeout). The message being read when a limit is reached is
 * read to its end, so a queue holds at most twice the buffer plus one message.
 *
 * <p><b>Failures.</b> A peer whose image goes away (it closed, its process or driver died, or it
 * was silent for {@value #LIVENESS_OPTION} milliseconds) or whose stream stays unconnected that
 * long fails every pending and later call that involves it with a {@link PeerFailureException}
 * naming it, once what it sent before has been read.
 *
 * <p>{@link #close()} says goodbye to every peer and waits (a few seconds at most) until each has
 * read everything this rank sent, then stops the receiver thread, the client and the embedded
 * driver.
 */
public final class AeronTransport implements Transport {
    /** The name {@link io.ringstar.Transports#open} finds this transport by. */
    public static final String NAME = "aeron";
    /** Option: the directory of a running media driver to use instead of an embedded one. */
    public static final String DIR_OPTION = "aeron.dir";
    /** Option: where embedded drivers' directories go; {@code /dev/shm} by default, else the temporary directory. */
    public static final String DIR_ROOT_OPTION = "aeron.dirRoot";
    /** Option: the embedded driver's threading mode, {@code shared} (default), {@code shared_network} or {@code dedicated}. */
    public static final String THREADING_OPTION = "aeron.threading";
    /** Option: idle strategy of the embedded driver and this transport's threads: {@code backoff} (default), {@code sleep}, {@code yield}, {@code spin}. */
    public static final String IDLE_OPTION = "aeron.idle";
    /** Option: term length of every stream, a power of two from 64 KiB; 4 MiB by default. */
    public static final String TERM_LENGTH_OPTION = "aeron.termLength";
    /**
     * Option: the UDP frame size; 65504 when rank 0 and this rank are on loopback, else 1408. IPC
     * uses 65504 whatever this says. Either is capped at an eighth of the term length, Aeron's limit.
     */
    public static final String MTU_OPTION = "aeron.mtu";
    /** Option: the most bytes per Aeron message; by default one frame, so every chunk is claimed in place. */
    public static final String CHUNK_BYTES_OPTION = "aeron.chunkBytes";
    /** Option: milliseconds of silence after which a peer counts as gone; 5000 by default. */
    public static final String LIVENESS_OPTION = "aeron.livenessTimeoutMs";
    public static final int DEFAULT_LIVENESS_MILLIS = 5000;
    /**
     * Option: bytes received from one peer and not yet taken by {@code recv} before reading it
     * stops; twice that while this rank is sending to the peer.
     */
    public static final String RECEIVE_BUFFER_OPTION = NetworkOptions.RECEIVE_BUFFER_OPTION;
    public static final int DEFAULT_RECEIVE_BUFFER_BYTES = NetworkOptions.DEFAULT_RECEIVE_BUFFER_BYTES;
    /**
     * Option: the address this rank receives UDP on, given as an address, an interface name
     * ({@code eth0}) or a CIDR block ({@code 10.0.0.0/24}), as for the Netty transport; default for
     * rank 0 the coordinator's, else the local address that routes to it. Not the wildcard.
     */
    public static final String BIND_OPTION = NetworkOptions.BIND_OPTION;
    /** Option: the UDP port this rank receives on; 0 (the default) picks a free one. */
    public static final String PORT_OPTION = NetworkOptions.PORT_OPTION;
    /** Option: the job's id; ranks of different jobs refuse each other. */
    public static final String JOB_ID_OPTION = NetworkOptions.JOB_ID_OPTION;
    public static final String DEFAULT_JOB_ID = NetworkOptions.DEFAULT_JOB_ID;
    /** Option: the shared secret itself. */
    public static final String SECRET_OPTION = NetworkOptions.SECRET_OPTION;
    /** Option: a file holding the shared secret (surrounding white space is ignored). */
    public static final String SECRET_FILE_OPTION = NetworkOptions.SECRET_FILE_OPTION;
    /** Environment variable read for the shared secret when neither option is set. */
    public static final String SECRET_ENV = NetworkOptions.SECRET_ENV;

    /** Every ringstar stream uses this id; session ids tell the pairs apart. */
    static final int STREAM_ID = 0x5253;
    /** Draws each rank's base of the UDP session ids it takes. */
    private static final SecureRandom SESSION_BASES = new SecureRandom();
    /** The most close waits for its peers to acknowledge its goodbye. */
    private static final long GOODBYE_WAIT_MILLIS = 5_000;
    /** How long close waits for threads still inside a stream to leave it before it closes the client. */
    private static final long CLOSE_LOCK_OUT_MILLIS = 1_000;
    private static final ByteBuffer NO_BYTES = ByteBuffer.allocate(0).asReadOnlyBuffer();
    private static final System.Logger LOG = System.getLogger(AeronTransport.class.getName());

    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final AeronSettings settings;
    private final PeerStream[] peers;
    /** By peer: the subscription that takes only that peer's session (UDP until the rendezvous says IPC). */
    private final Subscription[] subscriptions;
    /** Where this rank receives UDP, once bound. */
    private InetSocketAddress udpEndpoint;
    private DriverHandle driver;
    private Thread receiver;
    private volatile boolean running = true;
    private final Object lifecycle = new Object();
    private long barrierEpoch;
    private volatile boolean closed;
    /** The constructor formed the group: every peer confirmed its streams, so it is owed a goodbye. */
    private volatile boolean formed;

    /**
     * Opens this rank's transport and forms the group; blocks until every stream is connected.
     *
     * @throws io.ringstar.InvalidConfigException if an option is malformed; nothing was started
     * @throws CollectiveTimeoutException if the group did not form within the configuration's
     *     timeout, naming the ranks that never came
     * @throws CollectiveException if the driver cannot start, or rank 0 refused this rank
     */
    public AeronTransport(DistributedConfig config) {
        this(config, UnaryOperator.identity());
    }

    /** As the public constructor, with a last say over an embedded driver's context (tests inject loss). */
    AeronTransport(DistributedConfig config, UnaryOperator<MediaDriver.Context> driverCustomizer) {
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.timeout = config.timeout();
        this.settings = AeronSettings.from(config, System.getenv());
        this.peers = new PeerStream[worldSize];
        this.subscriptions = new Subscription[worldSize];
        if (worldSize == 1) {
            return;
        }
        if (settings.secret() == null) {
            NetworkOptions.warnUnauthenticated(LOG, NAME, rank, settings.jobId(), null);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            driver = DriverHandle.open(settings, rank, driverCustomizer, this::onImageGone,
                    this::onClientError);
            formGroup(deadline);
            formed = true;
        } catch (RuntimeException | Error e) {
            // What stopped the group forming is the failure to report; a failure to clean up only goes with it.
            try {
                close();
            } catch (RuntimeException | Error t) {
                e.addSuppressed(t);
            }
            throw e;
        }
    }

    // ---- forming the group ----

    /** A host as an Aeron channel URI wants it: an IPv6 address in brackets. */
    private static String uriHost(String host) {
        return host.indexOf(':') >= 0 ? "[" + host + "]" : host;
    }

    private void formGroup(long deadline) {
        String host = settings.bindAddress().getHostAddress();
        // Before the rendezvous, so that no peer's stream can arrive before this rank takes it: one
        // subscription per peer, each to the one session id that peer will send UDP as. The ids are
        // this rank's random base plus the peer's rank; the base reaches the peers only through the
        // authenticated rendezvous. The driver drops every other session sent to this port without
        // making an image of it, so a stranger's bytes are never read. The first subscription binds
        // the port; the tag makes the others share its socket (port 0 would open another).
        int sessionBase = SESSION_BASES.nextInt();
        long tag = driver.aeron().nextCorrelationId();
        int first = rank == 0 ? 1 : 0;
        subscriptions[first] = driver.aeron().addSubscription(udpChannel(host, settings.port()) + "|tags=" + tag
                + "|session-id=" + (sessionBase + first), STREAM_ID);
        int port = resolvedPort(subscriptions[first], deadline);
        // The others at once, and then awaited together: one round trip to the driver, not one per peer.
        long[] registrations = new long[worldSize];
        for (int peer = first + 1; peer < worldSize; peer++) {
            if (peer != rank) {
                registrations[peer] = driver.aeron().asyncAddSubscription("aeron:udp?tags=" + tag + "|session-id="
                        + (sessionBase + peer), STREAM_ID);
            }
        }
        for (int peer = first + 1; peer < worldSize; peer++) {
            if (peer != rank) {
                subscriptions[peer] = awaitSubscription(peer, registrations[peer], deadline);
            }
        }
        udpEndpoint = new InetSocketAddress(settings.bindAddress(), port);
        Rendezvous.Endpoint self = new Rendezvous.Endpoint(settings.jobId(), worldSize, rank, host, port, sessionBase,
                driver.driverId());
        Rendezvous.Table table = rank == 0
                ? Rendezvous.coordinate(new InetSocketAddress(settings.coordinatorAddress(), settings.coordinatorPort()),
                        settings.secret(), self, deadline)
                : Rendezvous.register(new InetSocketAddress(settings.coordinatorAddress(), settings.coordinatorPort()),
                        settings.secret(), self, deadline);
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer == rank) {
                continue;
            }
            Rendezvous.Endpoint there = table.endpoints().get(peer);
            boolean ipc = there.driverId().equals(driver.driverId());
            // IPC session ids must be unique on the shared driver, so they come from rank 0's nonce.
            int sessionOut = ipc ? sessionId(table.nonce(), rank, peer) : there.sessionBase() + rank;
            int sessionIn = ipc ? sessionId(table.nonce(), peer, rank) : sessionBase + peer;
            int mtu = Math.min(ipc ? AeronSettings.MAX_MTU : settings.mtu(), settings.termLength() / 8);
            String common = "term-length=" + settings.termLength() + "|mtu=" + mtu + "|session-id=" + sessionOut;
            // Aeron connects the UDP socket it sends from to the peer's endpoint: it is bound to the
            // route's source address (never the wildcard) and takes datagrams from that peer only.
            ExclusivePublication publication = driver.aeron().addExclusivePublication(ipc ? "aeron:ipc?" + common
                    : udpChannel(there.host(), there.port()) + "|" + common, STREAM_ID);
            if (ipc) {
                subscriptions[peer].close();
                subscriptions[peer] = driver.aeron().addSubscription("aeron:ipc?session-id=" + sessionIn, STREAM_ID);
            }
            peers[peer] = new PeerStream(rank, peer, sessionIn, ipc, publication, settings.chunkBytes(),
                    settings.receiveBufferBytes(), settings.liveness(), settings.newIdleStrategy(),
                    settings.newIdleStrategy());
        }
        receiver = new Thread(this::receive, "ringstar-aeron-rank" + rank);
        receiver.setDaemon(true);
        receiver.start();
        awaitConnected(deadline);
        for (PeerStream peer : peers) {
            if (peer != null) {
                peer.sendRecord("rendezvous", ChunkHeader.READY, 0, deadline, timeout);
            }
        }
        List<Integer> missing = new ArrayList<>();
        for (PeerStream peer : peers) {
            if (peer != null && !peer.awaitReady(deadline)) {
                missing.add(peer.peer());
            }
        }
        if (!missing.isEmpty()) {
            throw new CollectiveTimeoutException("rendezvous", rank, missing.get(0), "ranks " + missing
                    + " did not confirm their Aeron streams within the timeout of " + timeout);
        }
    }

    private Subscription awaitSubscription(int peer, long registration, long deadline) {
        IdleStrategy idle = settings.newIdleStrategy();
        while (true) {
            Subscription subscription = driver.aeron().getSubscription(registration);
            if (subscription != null) {
                return subscription;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new CollectiveTimeoutException("rendezvous", rank, peer,
                        "the media driver did not add the subscription for rank " + peer + "'s stream within the timeout of "
                        + timeout);
            }
            idle.idle(0);
        }
    }

    /** Session ids unique within the group and, through rank 0's random nonce, apart from other groups'. */
    private int sessionId(int nonce, int from, int to) {
        return nonce + from * worldSize + to;
    }

    private int resolvedPort(Subscription subscription, long deadline) {
        IdleStrategy idle = settings.newIdleStrategy();
        while (true) {
            String resolved = subscription.tryResolveChannelEndpointPort();
            if (resolved != null) {
                String endpoint = ChannelUri.parse(resolved).get("endpoint");
                return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new CollectiveTimeoutException("rendezvous", rank, CollectiveException.NO_RANK,
                        "the media driver did not bind a UDP port on " + settings.bindAddress().getHostAddress()
                        + " within the timeout of " + timeout);
            }
            idle.idle(0);
        }
    }

    /** Waits until every publication has a subscriber and every peer's image is here. */
    private void awaitConnected(long deadline) {
        IdleStrategy idle = settings.newIdleStrategy();
        while (true) {
            List<Integer> missing = new ArrayList<>();
            for (PeerStream peer : peers) {
                if (peer == null) {
                    continue;
                }
                if (!peer.hasImage()) {
                    Image image = imageOf(peer);
                    if (image != null) {
                        peer.image(image);
                    }
                }
                if (peer.failure() != null) {
                    throw new PeerFailureException("rendezvous", rank, peer.peer(), peer.failure());
                }
                if (!peer.hasImage() || !peer.publicationConnected()) {
                    missing.add(peer.peer());
                }
            }
            if (missing.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new CollectiveTimeoutException("rendezvous", rank, missing.get(0), "the Aeron streams with ranks "
                        + missing + " did not connect within the timeout of " + timeout);
            }
            idle.idle(0);
        }
    }

    /** The peer's image, once its stream is here. */
    private Image imageOf(PeerStream peer) {
        return subscriptions[peer.peer()].imageBySessionId(peer.sessionIn());
    }

    /** An Aeron UDP channel with this endpoint. */
    private static String udpChannel(String host, int port) {
        return "aeron:udp?endpoint=" + uriHost(host) + ":" + port;
    }

    private void onImageGone(Image image) {
        for (PeerStream peer : peers) {
            if (peer != null && image.subscription() == subscriptions[peer.peer()]) {
                peer.onImageGone();
            }
        }
    }

    /** Where this rank receives UDP, or null for a group of one. */
    InetSocketAddress udpEndpoint() {
        return udpEndpoint;
    }

    private void onClientError(Throwable error) {
        LOG.log(System.Logger.Level.WARNING, "rank " + rank + "'s Aeron client: " + error);
        if (error instanceof io.aeron.exceptions.DriverTimeoutException) {
            for (PeerStream peer : peers) {
                if (peer != null) {
                    peer.fail("the media driver of rank " + rank + " stopped answering: " + error.getMessage());
                }
            }
        }
    }

    /**
     * The receiver thread: polls every peer's image into its queue, acknowledges goodbyes, and
     * watches that every publication stays connected, until the transport closes.
     */
    private void receive() {
        IdleStrategy idle = settings.newIdleStrategy();
        try {
            while (running) {
                int work = 0;
                long now = System.nanoTime();
                for (PeerStream peer : peers) {
                    if (peer != null) {
                        work += peer.poll(PeerStream.FRAGMENT_LIMIT);
                        peer.acknowledgeGoodbye();
                        peer.checkConnected(now);
                    }
                }
                idle.idle(work);
            }
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "rank " + rank + "'s receiver thread failed: " + e);
            for (PeerStream peer : peers) {
                if (peer != null) {
                    peer.fail("the receiver thread of rank " + rank + " failed: " + e);
                }
            }
        }
    }

    // ---- the Transport contract ----

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int worldSize() {
        return worldSize;
    }

    /** True if this rank talks to {@code peer} over IPC through a shared driver, false for UDP. */
    public boolean usesIpc(int peer) {
        return stream("usesIpc", peer).ipc();
    }

    /** The directory of the media driver this rank uses, or null for a group of one. */
    public String driverDirectory() {
        return driver == null ? null : driver.directory();
    }

    @Override
    public void send(int destRank, ByteBuffer data) {
        send(destRank, NO_BYTES, data);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Both parts are copied straight into Aeron's term (no intermediate buffer); this waits
     * only while the term is full, at most the timeout.
     */
    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        stream("send", destRank).send(header, payload, System.nanoTime() + timeout.toNanos(), timeout);
    }

    @Override
    public void recv(int srcRank, ByteBuffer dst) {
        stream("recv", srcRank).receive(dst, true, System.nanoTime() + timeout.toNanos(), timeout);
    }

    @Override
    public int recvAtMost(int srcRank, ByteBuffer dst, Duration wait) {
        TransportChecks.checkWait("recv", rank, wait);
        return stream("recv", srcRank).receive(dst, false, System.nanoTime() + wait.toNanos(), wait);
    }

    @Override
    public void barrier() {
        checkOpen("barrier");
        long deadline = System.nanoTime() + timeout.toNanos();
        long epoch;
        synchronized (lifecycle) {
            epoch = ++barrierEpoch;
        }
        for (PeerStream peer : peers) {
            if (peer != null) {
                peer.sendRecord("barrier", ChunkHeader.BARRIER, epoch, deadline, timeout);
            }
        }
        List<Integer> missing = new ArrayList<>();
        for (PeerStream peer : peers) {
            if (peer != null && !peer.awaitBarrier(epoch, deadline)) {
                missing.add(peer.peer());
            }
        }
        if (!missing.isEmpty()) {
            throw new CollectiveTimeoutException("barrier", rank, missing.get(0), "ranks " + missing
                    + " did not reach the barrier within " + timeout);
        }
    }

    /**
     * Says goodbye to every peer still there and waits, at most a few seconds, until each has read
     * everything this rank sent (its driver must keep running until then); then stops the receiver
     * thread, the Aeron client and the embedded driver, which removes its directory. A transport
     * whose constructor failed says no goodbye: the group never formed. Idempotent, and bounded in
     * time: the goodbye, the receiver thread's end and the wait for callers to leave the streams
     * each have a limit of their own.
     */
    @Override
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (driver == null) {
            return;
        }
        try {
            if (receiver != null && formed) {
                sayGoodbye();
            }
        } finally {
            for (PeerStream peer : peers) {
                if (peer != null) {
                    peer.closeHere();
                }
            }
            running = false;
            if (receiver != null) {
                try {
                    receiver.join(TimeUnit.SECONDS.toMillis(5));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            closeClient();
        }
    }

    /**
     * Closes the client and the driver once no caller is inside a stream's buffers: the client
     * unmaps them, and a recv polling the image or a send inside a claim would then touch unmapped
     * memory and crash the JVM. Callers leave at their next check of the closed state; one that
     * has not left within {@link #CLOSE_LOCK_OUT_MILLIS} (or a receiver thread that did not end)
     * gets the client's close linger instead, so it finishes in mapped memory and sees the streams
     * closed.
     */
    private void closeClient() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_LOCK_OUT_MILLIS);
        boolean othersMayBeInside = receiver != null && receiver.isAlive();
        try {
            for (PeerStream peer : peers) {
                if (peer != null && !peer.lockOutForClose(deadline)) {
                    othersMayBeInside = true;
                    LOG.log(System.Logger.Level.DEBUG, "rank " + rank + ": a call with rank " + peer.peer()
                            + " was still inside its stream when the transport closed");
                }
            }
            driver.close(othersMayBeInside);
        } finally {
            for (PeerStream peer : peers) {
                if (peer != null) {
                    peer.unlockAfterClose();
                    peer.release();
                }
            }
        }
    }

    private void sayGoodbye() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.min(GOODBYE_WAIT_MILLIS,
                timeout.toMillis()));
        List<PeerStream> told = new ArrayList<>();
        for (PeerStream peer : peers) {
            if (peer != null && !peer.gone()) {
                try {
                    peer.sendRecord("close", ChunkHeader.GOODBYE, 0, deadline, timeout);
                    told.add(peer);
                } catch (RuntimeException e) {
                    // Whatever stopped one goodbye (a failed peer, a closed stream, an Aeron error), close goes on.
                    LOG.log(System.Logger.Level.DEBUG, "rank " + rank + " could not say goodbye to rank "
                            + peer.peer() + ": " + e.getMessage());
                }
            }
        }
        for (PeerStream peer : told) {
            if (!peer.awaitGoodbyeAcknowledged(deadline)) {
                LOG.log(System.Logger.Level.DEBUG, "rank " + rank + ": rank " + peer.peer()
                        + " did not acknowledge the goodbye before the close linger ran out");
            }
        }
    }

    private PeerStream stream(String operation, int peer) {
        checkOpen(operation);
        TransportChecks.checkPeer(operation, rank, worldSize, peer);
        return peers[peer];
    }

    private void checkOpen(String operation) {
        TransportChecks.checkOpen(closed, operation, rank);
    }

    @Override
    public String toString() {
        return "AeronTransport{rank=" + rank + ", worldSize=" + worldSize + ", " + settings + '}';
    }
}
