package io.ringstar.transport.aeron;

import io.aeron.Image;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.DistributedConfig;
import io.ringstar.PeerFailureException;
import io.ringstar.config.NetworkOptions;
import io.ringstar.spi.BoundTransport;
import io.ringstar.spi.PeerChannel;
import io.ringstar.spi.PeerTransport;
import io.ringstar.spi.SharedMemoryOptions;
import io.ringstar.spi.WaitSchedule;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;

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
 * other rank are connected, or fails after the configuration's timeout naming the ranks that never
 * came. The ranks meet over TCP at {@link DistributedConfig#coordinatorAddr()}
 * ({@link GroupFormation}, {@link Rendezvous}), start-up order free, with the same handshake as the Netty
 * transport: magic, version, job id ({@value #JOB_ID_OPTION}), world size, rank, and an optional
 * shared secret (option {@value #SECRET_OPTION}, a file named by {@value #SECRET_FILE_OPTION}, or
 * the environment variable {@value #SECRET_ENV}) proved without sending it. Rank 0 then hands out
 * every rank's UDP endpoint ({@value #BIND_OPTION}, {@value #PORT_OPTION}), driver identity, and
 * the session ids it takes. A rank subscribes to exactly those sessions of its peers, so its media
 * driver drops any other stream sent to its port (a stranger's) without reading it. Without a
 * secret, the first rank of a process to open logs a WARNING that the job is unauthenticated. Every
 * socket binds the given address, never the wildcard: the UDP endpoint, and the sockets Aeron sends
 * from, which it connects to the peer (bound to the route's source address). The data frames
 * themselves are not authenticated: the secret keeps off-path strangers out, not someone who can
 * read and forge packets on the path.
 *
 * <p><b>Two-step open.</b> {@link io.ringstar.Transports#bind} ({@link AeronTransportProvider#bind})
 * does the first part of the constructor and returns at once: it checks the options, starts the
 * media driver (or connects to the one named), binds this rank's UDP endpoint and, on rank 0, the
 * TCP listener at the coordinator address, where port 0 takes any free port.
 * {@link BoundTransport#address()} is then where the others find this rank, as {@code host:port}:
 * rank 0's listener, which it publishes and the others open with as their coordinator address; for
 * another rank its UDP endpoint. {@link BoundTransport#join()} forms the group as the constructor
 * does, within the timeout counted from the join; registrations that reach rank 0 before it joins
 * wait in the listener's backlog (each retried after its handshake's 10 s). Closing before the
 * join closes the listener, the client and the embedded driver at once. A group of one binds
 * nothing. IPC and UDP alike: the UDP endpoint is bound before the rendezvous says which peers
 * share a driver.
 *
 * <p><b>Data.</b> A message goes as a 16-byte {@link io.ringstar.spi.Frame} header and its bytes,
 * cut into chunks of one Aeron frame ({@value #MTU_OPTION}), each written straight into the term
 * with {@code tryClaim}; chunks longer than a frame ({@value #CHUNK_BYTES_OPTION}) go through
 * {@code offer}. {@code send} copies the caller's bytes into the term and returns; while the term
 * is full it waits, at most until its deadline, reading meanwhile. The thread that waits in a call
 * polls the images itself (Aeron's own model): a fragment of the message it waits for goes to its
 * handler as a view of the term, without a copy (see {@link AeronChannel}); between calls a
 * background thread polls (see {@link PeerTransport}). What no receiver takes yet waits in the
 * peer's inbox, at most {@value #RECEIVE_BUFFER_OPTION} bytes ({@value #DEFAULT_RECEIVE_BUFFER_BYTES}
 * by default, twice that while this rank sends to the peer); past that it stays in the term and
 * Aeron's flow control holds the sender back.
 *
 * <p><b>Peers on this host</b> (an advertised address equal to this rank's, or this rank's media
 * driver) exchange their frames through a shared-memory ring per direction once the group has
 * formed (option {@code sharedMemory}: {@code auto} by default, {@code on}, {@code off}; flag
 * {@code --shared-memory}, variable {@code RINGSTAR_SHARED_MEMORY}; ring size
 * {@code sharedMemoryBytes}, directory {@code sharedMemoryDirectory}; see
 * {@link io.ringstar.spi.SharedMemoryRing}): written straight from the caller's memory and read by
 * the receiver straight out of the mapping, without the media driver. The Aeron streams stay
 * connected beside them, and the sentinels still report a death. Where a ring cannot be had the
 * pair keeps its IPC or UDP stream and the process logs one warning; with {@code on} the open
 * fails instead. {@link #sharedMemoryPeers()} names the peers served so.
 *
 * <p><b>Failures, and pauses.</b> The rendezvous's TCP connections stay open as {@link Sentinels}:
 * a killed process's sockets close at once, so a dead rank is known within milliseconds (rank 0
 * tells the others), and every call that involves it fails with a {@link PeerFailureException}
 * naming it, once what it sent before has been read. A paused process (SIGSTOP, a long garbage
 * collection) keeps its sockets, so it is not taken for dead: the streams' own liveness timeout
 * ({@value #LIVENESS_OPTION}) is the collective timeout by default, and a pause shorter than that
 * is survived. A peer whose image goes away, or whose stream stays unconnected for the liveness
 * timeout, fails the same way.
 *
 * <p>{@link #close()} says goodbye to every peer and waits (a few seconds at most) until each has
 * read everything this rank sent, then closes the sentinels, the client and the embedded driver.
 */
public final class AeronTransport extends PeerTransport {
    /** The name {@link io.ringstar.Transports#open} finds this transport by. */
    public static final String NAME = "aeron";
    /** Option: the directory of a running media driver to use instead of an embedded one. */
    public static final String DIR_OPTION = "aeron.dir";
    /** Option: where embedded drivers' directories go; {@code /dev/shm} by default, else the temporary directory. */
    public static final String DIR_ROOT_OPTION = "aeron.dirRoot";
    /**
     * Option: the embedded driver's threading mode, {@code shared} (default), {@code shared_network} or
     * {@code dedicated}.
     */
    public static final String THREADING_OPTION = "aeron.threading";
    /**
     * Option: idle strategy of the embedded driver's threads (and of the waits for the driver
     * while the group forms): {@code backoff} (default), {@code sleep}, {@code yield}, {@code spin}.
     * An embedded driver's {@code backoff} parks up to 1 ms, then longer as its idle time grows (a
     * tenth of it, at most 8 ms), and wakes whenever this rank sends or begins to wait; a standalone
     * {@link SharedMediaDriver}'s parks at most 1 ms. Calls wait on core's schedule
     * ({@link io.ringstar.spi.PeerTransport}), not on this.
     */
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
    /**
     * Option: milliseconds of silence after which a peer's stream counts as gone; by default the
     * collective timeout, so that a pause shorter than it is survived (deaths are noticed by the
     * {@link Sentinels} in the meantime).
     */
    public static final String LIVENESS_OPTION = "aeron.livenessTimeoutMs";
    /** The liveness timeout a shared media driver uses when told none. */
    public static final int DEFAULT_LIVENESS_MILLIS = 60_000;
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
    /** How often the sentinels and the streams' connection are checked. */
    private static final long CHECK_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The longest a waiting thread parks at a time: a polling transport has nothing to wake it. */
    private static final long MAX_PARK_NANOS = WaitSchedule.MAX_BLOCK_NANOS;
    private static final System.Logger LOG = System.getLogger(AeronTransport.class.getName());

    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final AeronSettings settings;
    private final AeronChannel[] peers;
    /** By peer: the subscription that takes only that peer's session (UDP until the rendezvous says IPC). */
    private final Subscription[] subscriptions;
    /** Option {@code waitSpin}, read with the others before anything starts. */
    private final String waitSpin;
    /** When {@link #AeronTransport(DistributedConfig) opening in one step} must have formed the group. */
    private final Deadline openDeadline;
    /** Where this rank receives UDP, once bound. */
    private InetSocketAddress udpEndpoint;
    private DriverHandle driver;
    /** Forms the group; null in a group of one, or if the driver did not start. */
    private GroupFormation group;
    private Sentinels sentinels;
    private final Sentinels.Listener onDeath = this::onDeath;
    private long lastCheck;
    /** How this rank's waits spin, yield and block, once the group formed. */
    private WaitSchedule waitSchedule;
    /** Options {@code sharedMemory*}, read with the others before anything is started. */
    private final SharedMemoryOptions sharedMemory;
    /** The thread parked in {@link #progress}, for {@link #wakeUp}. */
    private volatile Thread parked;

    /**
     * Opens this rank's transport and forms the group; blocks until every stream is connected. The
     * two steps of {@link AeronTransportProvider#bind} in one, within one timeout, except that rank 0
     * needs a fixed port.
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
        this(config, AeronSettings.from(config, System.getenv()), driverCustomizer);
        // One step: the whole open within one timeout, as before there were two.
        join(openDeadline);
    }

    /**
     * The first step, which both ways of opening take: the settings checked and, in a group of more
     * than one, the media driver started, the UDP endpoint bound and rank 0's listener at the
     * coordinator address bound. {@link #join} is the second.
     */
    private AeronTransport(DistributedConfig config, AeronSettings settings,
            UnaryOperator<MediaDriver.Context> driverCustomizer) {
        super(NAME, config.rank(), config.worldSize(), config.timeout());
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.timeout = config.timeout();
        this.settings = settings;
        this.waitSpin = NetworkOptions.WAIT_SPIN.value(config);
        this.sharedMemory = SharedMemoryOptions.from(config);
        this.peers = new AeronChannel[worldSize];
        this.subscriptions = new Subscription[worldSize];
        this.openDeadline = Deadline.after(timeout);
        if (worldSize == 1) {
            return;
        }
        if (settings.secret() == null) {
            NetworkOptions.warnUnauthenticated(LOG, NAME, rank, settings.jobId(), null);
        }
        try {
            driver = DriverHandle.open(settings, rank, driverCustomizer, this::onImageGone, this::onClientError);
            group = new GroupFormation(this, rank, worldSize, timeout, settings, driver, peers, subscriptions);
            group.bind(openDeadline);
            udpEndpoint = group.udpEndpoint();
        } catch (RuntimeException | Error e) {
            closeAfter(e);
            throw e;
        }
    }

    /**
     * The first step of a two-step open: see {@link AeronTransportProvider#bind}.
     *
     * @throws io.ringstar.InvalidConfigException if an option is malformed; nothing was started
     * @throws CollectiveException if the driver cannot start or an endpoint cannot be bound
     */
    static BoundTransport bind(DistributedConfig config, UnaryOperator<MediaDriver.Context> driverCustomizer) {
        AeronTransport bound = new AeronTransport(config, AeronSettings.forBind(config, System.getenv()),
                driverCustomizer);
        // Nobody dials a group of one, which binds nothing.
        String address = bound.group == null ? config.coordinatorAddr() : bound.group.address();
        return BoundTransport.of(bound.rank, address, () -> bound.join(Deadline.after(bound.timeout)), bound::close);
    }

    /**
     * The second step: meets the other ranks with the bound endpoints and connects every stream;
     * returns once the group has formed. If it fails, everything is released before it throws.
     */
    private AeronTransport join(Deadline deadline) {
        if (worldSize == 1) {
            waitSchedule = WaitSchedule.choose(WAIT_SPIN_AUTO, 1);
            start(new PeerChannel[1], waitSchedule);
            return this;
        }
        try {
            sentinels = group.form(deadline);
            waitSchedule = WaitSchedule.choose(waitSpin, group.busyThreadsOnThisHost());
            start(peers, waitSchedule);
            group.confirm(deadline);
            // Once every stream is connected, so the negotiation's records go out at once.
            startSharedMemory(sharedMemory);
        } catch (RuntimeException | Error e) {
            closeAfter(e);
            throw e;
        }
        return this;
    }

    /** Closes this transport after {@code failure} to open it, the one to report; a failure to close goes with it. */
    private void closeAfter(Throwable failure) {
        try {
            close();
        } catch (RuntimeException | Error t) {
            failure.addSuppressed(t);
        }
    }

    /** Runs {@code action} under the I/O lock: the steps of forming the group that touch the streams. */
    void withIoLock(Runnable action) {
        lockIo();
        try {
            action.run();
        } finally {
            unlockIo();
        }
    }

    // ---- failures the driver and the sentinels report ----

    private void onImageGone(Image image) {
        for (AeronChannel peer : peers) {
            if (peer != null && image.subscription() == subscriptions[peer.peer()]) {
                // A shared driver applies its own liveness timeout, not this rank's option.
                peer.onImageGone(settings.externalDir() == null
                        ? "the liveness timeout of " + settings.liveness().toMillis() + " ms"
                        : "the liveness timeout of the media driver in " + settings.externalDir());
            }
        }
    }

    private void onDeath(int deadRank, String why) {
        if (deadRank >= 0 && deadRank < worldSize && peers[deadRank] != null) {
            peers[deadRank].deathReported(why);
        }
    }

    private void onClientError(Throwable error) {
        LOG.log(System.Logger.Level.WARNING, "rank " + rank + "'s Aeron client: " + error);
        if (error instanceof io.aeron.exceptions.DriverTimeoutException) {
            failAll("the media driver of rank " + rank + " stopped answering: " + error.getMessage(), error);
        }
    }

    // ---- the group as formed ----

    /** A peer that advertised this host's address or this rank's driver is offered a shared-memory ring. */
    @Override
    protected boolean mayShareMemoryWith(int peer) {
        return group != null && group.sameHost(peer);
    }

    /** True if this rank talks to {@code peer} over IPC through a shared driver, false for UDP. */
    public boolean usesIpc(int peer) {
        if (peer < 0 || peer >= worldSize || peer == rank) {
            throw new IllegalArgumentException("usesIpc on rank " + rank + ": peer rank " + peer
                    + " is not another rank of this group of " + worldSize);
        }
        return peers[peer].streams.ipc();
    }

    /** The directory of the media driver this rank uses, or null for a group of one. */
    public String driverDirectory() {
        return driver == null ? null : driver.directory();
    }

    /** How this rank's waits spin, yield and block, as chosen when the group formed; null before. */
    WaitSchedule waitSchedule() {
        return waitSchedule;
    }

    /** Where this rank receives UDP, or null for a group of one. */
    InetSocketAddress udpEndpoint() {
        return udpEndpoint;
    }

    // ---- the data path ----

    @Override
    protected int progress(long blockNanos) {
        if (blockNanos == 0 && driver != null) {
            // A wait in its first milliseconds (spinning or yielding): what it awaits must not find the driver asleep.
            driver.wake();
        }
        int work = 0;
        for (AeronChannel peer : peers) {
            if (peer != null) {
                if (!peer.streams.hasImage()) {
                    Image image = imageOf(peer);
                    if (image != null) {
                        peer.streams.image(image);
                    }
                }
                work += peer.poll();
            }
        }
        long now = System.nanoTime();
        if (now - lastCheck > CHECK_INTERVAL_NANOS) {
            lastCheck = now;
            if (sentinels != null) {
                sentinels.check(onDeath);
            }
            for (AeronChannel peer : peers) {
                if (peer != null) {
                    peer.checkConnected(now, settings.liveness().toNanos());
                }
            }
        }
        if (work == 0 && blockNanos > 0) {
            parked = Thread.currentThread();
            try {
                LockSupport.parkNanos(this, Math.min(blockNanos, MAX_PARK_NANOS));
            } finally {
                parked = null;
            }
        }
        return work;
    }

    /** The peer's image, once its stream is here. */
    private Image imageOf(AeronChannel peer) {
        return subscriptions[peer.peer()].imageBySessionId(peer.streams.sessionIn());
    }

    @Override
    protected int poll(PeerChannel awaited) {
        AeronChannel peer = (AeronChannel) awaited;
        driver.wake();
        if (!peer.streams.hasImage()) {
            return progress(0);
        }
        return peer.poll();
    }

    @Override
    protected void wakeUp() {
        Thread thread = parked;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    // ---- closing ----

    /** Waits until every peer acknowledged this rank's goodbye, then says BYE on the sentinels. */
    @Override
    protected void beforeChannelsClose(Deadline deadline) {
        Closing.finishGoodbyes(this, peers, sentinels, deadline);
    }

    /**
     * Closes rank 0's listener at the coordinator address (if it was bound and the rendezvous did
     * not close it), then the sentinels, the client and the driver (see {@link Closing#release}).
     */
    @Override
    protected void release(boolean othersMayBeInside) {
        if (group != null) {
            group.closeListener();
        }
        if (driver != null && settings.externalDir() != null && !othersMayBeInside) {
            // A shared driver frees this rank's UDP port once it has removed the subscriptions on it.
            // Closing them waits for its word that it has; the client's close would leave it to the
            // driver's own time, and a rank bound again at once could find its port still taken.
            for (Subscription subscription : subscriptions) {
                if (subscription != null) {
                    try {
                        subscription.close();
                    } catch (RuntimeException e) {
                        // The driver is gone or not answering: the client's close below is all there is.
                        LOG.log(System.Logger.Level.DEBUG, "rank " + rank + " could not close a subscription: " + e);
                    }
                }
            }
        }
        Closing.release(sentinels, driver, othersMayBeInside);
    }

    @Override
    public String toString() {
        return "AeronTransport{rank=" + rank + ", worldSize=" + worldSize + ", " + settings + '}';
    }
}
