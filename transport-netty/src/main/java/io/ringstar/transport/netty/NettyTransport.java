package io.ringstar.transport.netty;

import io.netty.channel.ChannelFuture;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.DistributedConfig;
import io.ringstar.config.NetworkOptions;
import io.ringstar.spi.BoundTransport;
import io.ringstar.spi.PeerChannel;
import io.ringstar.spi.PeerTransport;
import io.ringstar.spi.SharedMemoryOptions;
import io.ringstar.spi.WaitSchedule;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * TCP between processes and hosts: a full mesh with one connection per pair of ranks, formed
 * through a rendezvous at rank 0.
 *
 * <p><b>Forming the group.</b> The constructor blocks until this rank is connected to every other
 * rank, or fails after the configuration's timeout naming the ranks that never came. Rank 0
 * listens on {@link DistributedConfig#coordinatorAddr()}. Every other rank listens on its own
 * address ({@value #BIND_OPTION}, port {@value #PORT_OPTION}, 0 by default), registers with rank 0
 * (retrying with back-off while rank 0 is not up yet), and receives from it the table of every
 * rank's address once all have registered; the registration's connection then carries rank 0's
 * traffic. Each rank then connects to every lower rank except 0 and accepts the higher ones. Ranks
 * may start in any order, minutes apart, within the timeout.
 *
 * <p><b>Two-step open.</b> {@link io.ringstar.Transports#bind} ({@link NettyTransportProvider#bind})
 * does the first part of the constructor and returns at once: it checks the options, starts the
 * event loops and binds this rank's listener, rank 0's at the coordinator address, where port 0
 * takes any free port, another rank's as above. {@link BoundTransport#address()} is then the
 * listener's {@code host:port} as the other ranks dial it (the advertised address, never the
 * wildcard); rank 0 publishes it, the others open with it as their coordinator address, and
 * {@link BoundTransport#join()} forms the group as the constructor does, within the timeout counted
 * from the join. Registrations that reach rank 0's listener before it joins wait for it. Closing
 * before the join closes the listener and stops the event loops at once. A group of one binds
 * nothing. The constructor is the same two steps, with rank 0's port fixed.
 *
 * <p><b>Handshake and security.</b> Every connection starts with a handshake ({@link io.ringstar.spi.handshake})
 * that checks the protocol version, the job id ({@value #JOB_ID_OPTION}), the world size and the
 * rank, and with a shared secret (option {@value #SECRET_OPTION}, a file named by
 * {@value #SECRET_FILE_OPTION}, or the environment variable {@value #SECRET_ENV}) proves both sides
 * know it without sending it. A peer that fails any check is refused with a
 * {@link HandshakeException} on its side and a logged reason on this one; connections that are not
 * ringstar ranks at all (garbage, a port scanner, a wrong secret) are closed and do not disturb the
 * job; nothing such a connection sends is ever read as a frame. Without a secret (or TLS) anyone who
 * can reach the ports can join, and the first rank of a process to open logs a WARNING saying so.
 * Listeners bind only to the address given, never to every interface unless told so.
 *
 * <p><b>TLS.</b> With options {@value #TLS_CERT_OPTION} (this rank's PEM certificate chain),
 * {@value #TLS_KEY_OPTION} (its unencrypted PKCS#8 PEM key) and {@value #TLS_TRUST_OPTION} (PEM
 * certificates a peer's certificate must be, or be issued by), every connection runs over TLS with
 * both sides' certificates checked, from the handshake's first record to the last frame. Host
 * names are not checked: ranks reach each other at the addresses in rank 0's table, and are known
 * by their certificates. The three options go together, and every rank of a job must have them or
 * none: a plain rank and a TLS rank refuse each other with a {@link HandshakeException} saying so,
 * as does a rank whose certificate the other does not trust.
 *
 * <p><b>Data.</b> Netty forms the group; once it has, every connection is taken over from its
 * event loop ({@link Handover}) and the data moves over the plain NIO socket, driven by the thread
 * that calls (see {@link PeerTransport}): a send is one gathering write of the frame header, the
 * message header and the payload straight from the caller's memory, returning once the socket has
 * taken it; a receive reads the socket into the peer's inbox and hands the message to its handler
 * as views of that memory. No message crosses a thread. Between calls a background thread reads
 * for the rank. Up to {@value #RECEIVE_BUFFER_OPTION} bytes (64 MiB by default) from one peer may
 * wait to be received; past that this rank stops reading from it and TCP holds the peer back.
 * TCP_NODELAY is on, so small messages are not held back by Nagle's algorithm.
 * {@value #IO_THREADS_OPTION} event-loop threads (1 by default) serve the set-up and the listener.
 *
 * <p><b>Peers on this host</b> exchange their frames through shared memory (option
 * {@value #SHARED_MEMORY_OPTION}: {@code auto} by default, {@code on}, {@code off}; flag
 * {@code --shared-memory}, variable {@code RINGSTAR_SHARED_MEMORY}): a peer whose connection comes
 * from this host is offered a ring file of {@code sharedMemoryBytes} (4 MiB by default) in
 * {@code sharedMemoryDirectory} ({@code /dev/shm}) for each direction, and once it has mapped it
 * every frame goes through it, copied straight from the caller's memory and reduced by the receiver
 * straight out of the mapping (see {@link io.ringstar.spi.SharedMemoryRing}). The TCP connection
 * stays open as the death detector. Where the ring cannot be had (a container without the same
 * {@code /dev/shm}, too little room in it) the pair uses TCP and the process logs one warning; with
 * {@code on} the open fails instead. The ring files are readable by their owner only and are not
 * encrypted: TLS protects what crosses the network. {@link #sharedMemoryPeers()} names the peers
 * served so.
 *
 * <p><b>Failures.</b> A peer whose connection closes, or that sends bytes that break the framing,
 * fails every pending and later call that involves it with a {@link io.ringstar.PeerFailureException}
 * naming it, as soon as the connection drops (a killed process's sockets close at once). A peer
 * that stops without closing (a frozen process) is noticed only by the timeout, and survived if it
 * comes back before it.
 *
 * <p>{@link #close()} says goodbye to every peer, closes every connection and the listener, stops
 * the event-loop threads and frees every buffer before it returns, so a new group can use the same
 * ports at once.
 */
public final class NettyTransport extends PeerTransport {
    /** The name {@link io.ringstar.Transports#open} finds this transport by. */
    public static final String NAME = "netty";
    /** Option: the job's id; ranks of different jobs refuse each other. */
    public static final String JOB_ID_OPTION = NetworkOptions.JOB_ID_OPTION;
    public static final String DEFAULT_JOB_ID = NetworkOptions.DEFAULT_JOB_ID;
    /** Option: the shared secret itself. */
    public static final String SECRET_OPTION = NetworkOptions.SECRET_OPTION;
    /** Option: a file holding the shared secret (surrounding white space is ignored). */
    public static final String SECRET_FILE_OPTION = NetworkOptions.SECRET_FILE_OPTION;
    /** Environment variable read for the shared secret when neither option is set. */
    public static final String SECRET_ENV = NetworkOptions.SECRET_ENV;
    /**
     * Option: where this rank listens: an address or host name ({@code 10.0.0.5}, {@code ::1}), a
     * network interface's name ({@code eth0}) or a CIDR block ({@code 10.0.0.0/24}). Default: for
     * rank 0 the coordinator's address, for the others the local address that routes to it.
     */
    public static final String BIND_OPTION = NetworkOptions.BIND_OPTION;
    /** Option: the listening port of ranks other than 0; 0 (the default) picks a free one. */
    public static final String PORT_OPTION = NetworkOptions.PORT_OPTION;
    /** Option: this rank's certificate chain (PEM) for TLS. */
    public static final String TLS_CERT_OPTION = TlsContexts.CERT_OPTION;
    /** Option: this rank's private key (unencrypted PKCS#8 PEM, {@code BEGIN PRIVATE KEY}) for TLS. */
    public static final String TLS_KEY_OPTION = TlsContexts.KEY_OPTION;
    /** Option: the certificates (PEM; a CA, or every rank's own) that a peer's certificate must chain to. */
    public static final String TLS_TRUST_OPTION = TlsContexts.TRUST_OPTION;
    /** Option: event-loop threads for forming the group and the listener; 1 by default. */
    public static final String IO_THREADS_OPTION = "ioThreads";
    /** Option: bytes received from one peer and not yet taken by {@code recv} before reading pauses. */
    public static final String RECEIVE_BUFFER_OPTION = NetworkOptions.RECEIVE_BUFFER_OPTION;
    public static final int DEFAULT_RECEIVE_BUFFER_BYTES = NetworkOptions.DEFAULT_RECEIVE_BUFFER_BYTES;
    /** Option: whether peers on this host talk through shared memory: auto (default), on, off. */
    public static final String SHARED_MEMORY_OPTION = NetworkOptions.SHARED_MEMORY_OPTION;

    private static final System.Logger LOG = System.getLogger(NettyTransport.class.getName());

    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final NettySettings settings;
    /** Netty, the listener and the connections until they are taken over. */
    private final GroupFormation group;
    private final SocketLink[] links;
    private final Selector selector;
    /** What {@link #progress} does with each ready key; one object, so a round allocates nothing. */
    private final Consumer<SelectionKey> onReady = this::onReady;
    private int moved;
    /** Option {@code waitSpin}, read with the others before anything is bound. */
    private final String waitSpin;
    /** Options {@code sharedMemory*}, read with the others before anything is bound. */
    private final SharedMemoryOptions sharedMemory;
    /** When {@link #NettyTransport(DistributedConfig) opening in one step} must have formed the group. */
    private final Deadline openDeadline;
    /** How this rank's waits spin, yield and block, once the group formed. */
    private WaitSchedule waitSchedule;

    /**
     * Opens this rank's transport and forms the group; blocks until every rank is connected. The
     * two steps of {@link NettyTransportProvider#bind} in one: binds as it does (except that rank 0
     * needs a fixed port), then joins.
     *
     * @throws io.ringstar.InvalidConfigException if an option is malformed; nothing was opened
     * @throws CollectiveTimeoutException if the group did not form within the configuration's
     *     timeout, naming the ranks that never came
     * @throws HandshakeException if a peer refused this rank (or this rank the peer's answer)
     * @throws CollectiveException if this rank cannot listen where it must
     */
    public NettyTransport(DistributedConfig config) {
        this(config, NettySettings.from(config, System.getenv()));
        join(openDeadline);
    }

    /**
     * The first step, which both ways of opening take: the settings checked, the event loops
     * started and, in a group of more than one, the listener bound. {@link #join} is the second.
     */
    private NettyTransport(DistributedConfig config, NettySettings settings) {
        super(NAME, config.rank(), config.worldSize(), config.timeout());
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.timeout = config.timeout();
        this.settings = settings;
        this.waitSpin = NetworkOptions.WAIT_SPIN.value(config);
        this.sharedMemory = SharedMemoryOptions.from(config);
        this.links = new SocketLink[worldSize];
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new CollectiveException("connect", rank, CollectiveException.NO_RANK, "cannot open a selector: " + e,
                    e);
        }
        this.group = new GroupFormation(rank, worldSize, timeout, settings);
        // Mutual TLS authenticates the ranks too: only a job with neither is open to anyone.
        if (settings.secret() == null && settings.tls() == null && worldSize > 1) {
            NetworkOptions.warnUnauthenticated(LOG, NAME, rank, settings.jobId(),
                    "mutual TLS (--tls-cert, --tls-key, --tls-trust)");
        }
        this.openDeadline = Deadline.after(timeout);
        try {
            // A group of one has nobody to listen for.
            if (worldSize > 1) {
                group.listen();
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /**
     * The first step of a two-step open: see {@link NettyTransportProvider#bind}.
     *
     * @throws io.ringstar.InvalidConfigException if an option is malformed; nothing was bound
     * @throws CollectiveException if this rank cannot listen where it must
     */
    static BoundTransport bind(DistributedConfig config) {
        NettyTransport bound = new NettyTransport(config, NettySettings.forBind(config, System.getenv()));
        // Nobody dials a group of one, which binds nothing.
        String address = config.worldSize() == 1 ? config.coordinatorAddr()
                : bound.group.listening().address();
        return BoundTransport.of(bound.rank, address, () -> bound.join(Deadline.after(bound.timeout)), bound::close);
    }

    /**
     * The second step: forms the group with the bound listener; returns once every rank is
     * connected. If it fails, everything is released before it throws.
     */
    private NettyTransport join(Deadline deadline) {
        try {
            if (worldSize > 1) {
                group.form(deadline.remainingNanos() + System.nanoTime());
                takeOver(deadline);
            }
            waitSchedule = WaitSchedule.choose(waitSpin, countRanksOnThisHost());
            start(links, waitSchedule);
            startSharedMemory(sharedMemory);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
        return this;
    }

    /** Takes every connection over from Netty and makes it a {@link SocketLink} on this transport's selector. */
    private void takeOver(Deadline deadline) {
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer == rank) {
                continue;
            }
            Handover.Taken taken = group.handover(peer).takeOver(rank, deadline);
            try {
                taken.socket().setOption(StandardSocketOptions.TCP_NODELAY, true);
                links[peer] = new SocketLink(this, peer, taken, selector, settings.pauseReadingBytes());
            } catch (IOException | RuntimeException e) {
                // Netty no longer owns the socket and no link does yet: close it here, so that the
                // peer sees the connection end rather than waiting out its timeout.
                try {
                    taken.socket().close();
                } catch (IOException closing) {
                    e.addSuppressed(closing);
                }
                throw new CollectiveException("connect", rank, peer, "cannot take over the connection to rank " + peer
                        + ": " + e, e);
            }
        }
    }

    /** A peer whose connection comes from this host ({@link SocketLink#onThisHost}) is offered a shared-memory ring. */
    @Override
    protected boolean mayShareMemoryWith(int peer) {
        SocketLink link = links[peer];
        return link != null && link.onThisHost();
    }

    /** This rank and every peer whose connection comes from this host: the busy threads the spin rule counts. */
    private int countRanksOnThisHost() {
        int count = 1;
        for (SocketLink link : links) {
            if (link != null && link.onThisHost()) {
                count++;
            }
        }
        return count;
    }

    // ---- the data path ----

    /** How this rank's waits spin, yield and block, as chosen when the group formed; null before. */
    WaitSchedule waitSchedule() {
        return waitSchedule;
    }

    /** The port this rank listens on (for rank 0 the coordinator's), or -1 for a group of one. */
    public int listenPort() {
        return group.listenPort();
    }

    @Override
    protected int progress(long blockNanos) {
        moved = 0;
        for (SocketLink link : links) {
            if (link != null) {
                link.updateInterest();
                if (link.hasBufferedInput()) {
                    moved += link.read();
                }
            }
        }
        try {
            if (blockNanos <= 0 || moved > 0) {
                selector.selectNow(onReady);
            } else {
                selector.select(onReady, Math.max(1, TimeUnit.NANOSECONDS.toMillis(blockNanos)));
            }
        } catch (IOException e) {
            failAll("rank " + rank + "'s selector failed: " + e, e);
        } catch (java.nio.channels.ClosedSelectorException e) {
            // The transport is closing; the callers see that.
        }
        return moved;
    }

    @Override
    protected int poll(PeerChannel awaited) {
        // One read system call, where the selector would cost one more to say there is something.
        SocketLink link = (SocketLink) awaited;
        link.updateInterest();
        return link.read();
    }

    private void onReady(SelectionKey key) {
        if (key.isValid() && key.isReadable()) {
            moved += ((SocketLink) key.attachment()).read();
        }
    }

    @Override
    protected void wakeUp() {
        selector.wakeup();
    }

    @Override
    protected void release(boolean othersMayBeInside) {
        List<ChannelFuture> closingChannels = group.closeChannels();
        for (SocketLink link : links) {
            // Links made before a failed set-up never reached the skeleton, which closes the others.
            if (link != null) {
                link.close();
            }
        }
        group.stop(closingChannels);
        try {
            selector.close();
        } catch (IOException e) {
            // Nothing is left to read from it.
        }
    }

    @Override
    public String toString() {
        return "NettyTransport{rank=" + rank + ", worldSize=" + worldSize + ", job=" + settings.jobId()
                + ", listening=" + (group.listenAddress() == null ? "none" : group.listenAddress()) + '}';
    }
}
