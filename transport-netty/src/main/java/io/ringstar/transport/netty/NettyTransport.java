package io.ringstar.transport.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.transport.netty.Handshake.Address;
import io.ringstar.transport.netty.Handshake.Identity;
import io.ringstar.spi.NetworkOptions;
import io.ringstar.spi.TransportChecks;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

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
 * <p><b>Handshake and security.</b> Every connection starts with a handshake ({@link Handshake})
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
 * <p><b>Data.</b> Messages are split into frames of at most 4 MiB ({@link Frame}). A message of
 * more than 64 KiB is sent straight from the caller's memory (no copy; {@code send} returns once
 * the socket has taken it); shorter ones are copied and {@code send} returns at once. Received
 * bytes wait in the buffers they were read into until {@code recv} copies them out; past
 * {@value #RECEIVE_BUFFER_OPTION} bytes (64 MiB by default) per peer, reading from that peer
 * pauses, so memory stays bounded and back-pressure reaches the sender (except while this rank is
 * sending to that peer: two ranks that both send before they receive must not wait on each other). Native epoll is used where
 * it loads ({@value #EPOLL_OPTION}), plain NIO otherwise; {@value #IO_THREADS_OPTION} event-loop
 * threads (1 by default) serve all connections.
 *
 * <p><b>Failures.</b> A peer whose connection closes, or that sends bytes that break the framing,
 * fails every pending and later call that involves it with a {@link io.ringstar.PeerFailureException}
 * naming it, as soon as the connection drops (a killed process's sockets close at once). A peer
 * that stops without closing (a frozen process) is noticed only by the timeout.
 *
 * <p>{@link #close()} says goodbye to every peer, closes every connection and the listener, stops
 * the event-loop threads and frees every buffer before it returns, so a new group can use the same
 * ports at once.
 */
public final class NettyTransport implements Transport {
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
    /** Option: event-loop threads; 1 by default. */
    public static final String IO_THREADS_OPTION = "ioThreads";
    /** Option: {@code auto} (default), {@code true} or {@code false}: use native epoll. */
    public static final String EPOLL_OPTION = "epoll";
    /** Option: bytes received from one peer and not yet taken by {@code recv} before reading pauses. */
    public static final String RECEIVE_BUFFER_OPTION = NetworkOptions.RECEIVE_BUFFER_OPTION;
    public static final int DEFAULT_RECEIVE_BUFFER_BYTES = NetworkOptions.DEFAULT_RECEIVE_BUFFER_BYTES;

    private static final System.Logger LOG = System.getLogger(NettyTransport.class.getName());
    private static final ByteBuffer NO_BYTES = ByteBuffer.allocate(0).asReadOnlyBuffer();
    private static final Duration LONGEST_BACKOFF = Duration.ofSeconds(1);
    private static final int MAX_REMEMBERED_REFUSALS = 8;
    /** The longest one connection attempt may take before the next one, with back-off. */
    private static final long CONNECT_ATTEMPT_MILLIS = 5000;
    /** Binding a local port is immediate; this bound only keeps a broken event loop from hanging us. */
    private static final long BIND_WAIT_MILLIS = 10_000;
    /** Connections that may be in their handshake at once; more are closed at once (a flood, not a job). */
    private static final int MAX_PENDING_HANDSHAKES = 64;

    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final NettySettings settings;
    private final PeerLink[] links;
    private final EventLoopGroup loops;
    private final Identity self;
    private final Object formation = new Object();
    /** Rank 0, while forming: the registrations waiting for the table, by rank. */
    private final Registration[] registrations;
    /** Ranks whose connection an acceptor has admitted (a second claim is refused). */
    private final boolean[] admitted;
    private final ArrayDeque<String> refusals = new ArrayDeque<>();
    private final AtomicInteger pendingHandshakes = new AtomicInteger();
    private boolean formed;
    private Channel listener;
    private long barrierEpoch;
    private volatile boolean closed;

    /**
     * Opens this rank's transport and forms the group; blocks until every rank is connected.
     *
     * @throws io.ringstar.InvalidConfigException if an option is malformed; nothing was opened
     * @throws CollectiveTimeoutException if the group did not form within the configuration's
     *     timeout, naming the ranks that never came
     * @throws HandshakeException if a peer refused this rank (or this rank the peer's answer)
     * @throws CollectiveException if this rank cannot listen where it must
     */
    public NettyTransport(DistributedConfig config) {
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.timeout = config.timeout();
        this.settings = NettySettings.from(config, System.getenv());
        this.links = new PeerLink[worldSize];
        this.registrations = new Registration[worldSize];
        this.admitted = new boolean[worldSize];
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer != rank) {
                links[peer] = new PeerLink(rank, peer, settings.pauseReadingBytes());
            }
        }
        this.self = new Identity(Handshake.PURPOSE_PEER, settings.jobId(), worldSize, rank, settings.advertisedHost(), 0,
                CollectiveException.NO_RANK);
        this.loops = new MultiThreadIoEventLoopGroup(settings.ioThreads(),
                new DefaultThreadFactory("ringstar-netty-rank" + rank, true),
                settings.epoll() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        // Mutual TLS authenticates the ranks too: only a job with neither is open to anyone.
        if (settings.secret() == null && settings.tls() == null && worldSize > 1) {
            NetworkOptions.warnUnauthenticated(LOG, NAME, rank, settings.jobId(),
                    "mutual TLS (--tls-cert, --tls-key, --tls-trust)");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            if (worldSize > 1) {
                formGroup(deadline);
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    // ---- forming the group ----

    private void formGroup(long deadline) {
        Identity listening = listen();
        if (rank == 0) {
            List<Address> table = awaitRegistrations(deadline);
            sendTable(table);
            return;
        }
        Identity registering = new Identity(Handshake.PURPOSE_REGISTER, listening.jobId(), worldSize, rank,
                listening.listenHost(), listening.listenPort(), 0);
        Address coordinator = new Address(settings.coordinatorAddress().getHostAddress(), settings.coordinatorPort());
        List<Address> table = connect(0, coordinator, registering, deadline);
        for (int peer = 1; peer < rank; peer++) {
            connect(peer, table.get(peer), listening, deadline);
        }
        awaitHigherRanks(deadline);
    }

    /** Starts the listener; returns this rank's identity with the address it listens on. */
    private Identity listen() {
        int port = rank == 0 ? settings.coordinatorPort() : settings.port();
        ServerBootstrap server = new ServerBootstrap()
                .group(loops)
                .channel(settings.epoll() ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, 128)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        if (pendingHandshakes.incrementAndGet() > MAX_PENDING_HANDSHAKES) {
                            pendingHandshakes.decrementAndGet();
                            LOG.log(System.Logger.Level.WARNING, "rank {0} closed a connection from {1}: {2} handshakes"
                                    + " are already under way", rank, channel.remoteAddress(), MAX_PENDING_HANDSHAKES);
                            channel.close();
                            return;
                        }
                        AcceptorHandshake handshake = new AcceptorHandshake(settings.secret(), self, new Admission(),
                                settings.handshakeTimeout(), settings.tls() != null);
                        if (settings.tls() != null) {
                            channel.pipeline().addLast("tls-announcement", new TlsAnnouncement(settings.tls().acceptor()));
                        }
                        channel.pipeline().addLast("handshake", handshake);
                        channel.closeFuture().addListener(closed -> handshakeOver(handshake));
                    }
                });
        configure(server);
        InetSocketAddress where = new InetSocketAddress(settings.bindAddress(), port);
        ChannelFuture bound = server.bind(where);
        if (!bound.awaitUninterruptibly(BIND_WAIT_MILLIS)) {
            throw new CollectiveException("rendezvous", rank, CollectiveException.NO_RANK, "binding " + where
                    + " did not finish within " + BIND_WAIT_MILLIS + " ms");
        }
        if (!bound.isSuccess()) {
            throw new CollectiveException("rendezvous", rank, CollectiveException.NO_RANK, "cannot listen on "
                    + where + (rank == 0 ? " (the coordinator address)" : "") + ": " + bound.cause(), bound.cause());
        }
        listener = bound.channel();
        int boundPort = ((InetSocketAddress) listener.localAddress()).getPort();
        return new Identity(Handshake.PURPOSE_PEER, self.jobId(), worldSize, rank, settings.advertisedHost(), boundPort,
                CollectiveException.NO_RANK);
    }

    private void configure(ServerBootstrap server) {
        server.childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 64 << 10, 1 << 20));
    }

    private Bootstrap client(InitiatorHandshake handshake, long deadline) {
        long connectMillis = Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()),
                CONNECT_ATTEMPT_MILLIS));
        return new Bootstrap()
                .group(loops)
                .channel(settings.epoll() ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectMillis)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .option(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 64 << 10, 1 << 20))
                .handler(handshake);
    }

    /**
     * Connects to {@code peer} at {@code address} and runs the handshake, retrying with back-off
     * while the peer is not there yet.
     *
     * @return for a registration, the table of all ranks; otherwise an empty list
     */
    private List<Address> connect(int peer, Address address, Identity identity, long deadline) {
        String operation = identity.purpose() == Handshake.PURPOSE_REGISTER ? "rendezvous" : "connect";
        long backoffNanos = TimeUnit.MILLISECONDS.toNanos(20);
        String lastProblem = "no attempt was made";
        while (!closed) {
            InitiatorHandshake handshake = new InitiatorHandshake(settings.secret(), identity, links[peer], settings.tls());
            ChannelFuture connecting = client(handshake, deadline).connect(address.host(), address.port());
            // The connect timeout option ends the attempt; the extra second covers its own scheduling.
            connecting.awaitUninterruptibly(CONNECT_ATTEMPT_MILLIS + 1000);
            if (connecting.isSuccess()) {
                try {
                    return handshake.result().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof InitiatorHandshake.Refused refused) {
                        throw new HandshakeException(operation, rank, peer, "rank " + peer + " at " + address + " "
                                + refused.getMessage());
                    }
                    if (e.getCause() instanceof InitiatorHandshake.Abandoned abandoned) {
                        throw new CollectiveTimeoutException(operation, rank, peer, "rank 0 gave up forming the group: "
                                + abandoned.getMessage());
                    }
                    lastProblem = e.getCause().getMessage();
                } catch (TimeoutException e) {
                    connecting.channel().close();
                    lastProblem = peer == 0 ? "rank 0 took this rank's registration, but not every other rank had"
                            + " registered by then" : "the handshake did not finish";
                } catch (InterruptedException e) {
                    connecting.channel().close();
                    Thread.currentThread().interrupt();
                    throw new CollectiveException(operation, rank, peer, "interrupted while connecting to rank " + peer);
                }
            } else if (connecting.isDone()) {
                lastProblem = String.valueOf(connecting.cause().getMessage());
            } else {
                connecting.channel().close();
                lastProblem = "the connection attempt did not finish in " + CONNECT_ATTEMPT_MILLIS + " ms";
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                break;
            }
            sleep(Math.min(backoffNanos, remaining), operation, peer);
            if (backoffNanos >= remaining) {
                // The deadline has come: an attempt now could only time out, and would hide what the last one met.
                break;
            }
            backoffNanos = Math.min(backoffNanos * 2, LONGEST_BACKOFF.toNanos());
        }
        throw new CollectiveTimeoutException(operation, rank, peer, "could not connect to rank " + peer + " at "
                + address + " within " + timeout + "; last attempt: " + lastProblem);
    }

    private void sleep(long nanos, String operation, int peer) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException(operation, rank, peer, "interrupted while waiting to retry");
        }
    }

    /** Rank 0: waits for every other rank's registration; returns the table of addresses. */
    private List<Address> awaitRegistrations(long deadline) {
        synchronized (formation) {
            while (true) {
                List<Integer> missing = new ArrayList<>();
                for (int peer = 1; peer < worldSize; peer++) {
                    if (registrations[peer] == null || registrations[peer].handshake == null) {
                        missing.add(peer);
                    }
                }
                if (missing.isEmpty()) {
                    formed = true;
                    List<Address> table = new ArrayList<>(worldSize);
                    table.add(new Address(settings.advertisedHost(), settings.coordinatorPort()));
                    for (int peer = 1; peer < worldSize; peer++) {
                        Identity registered = registrations[peer].identity;
                        table.add(new Address(registered.listenHost(), registered.listenPort()));
                    }
                    return table;
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    String verdict = "ranks " + missing + " did not register with rank 0 at "
                            + settings.bindAddress().getHostAddress() + ":" + settings.coordinatorPort() + " within "
                            + timeout;
                    abandonRegistrations(verdict);
                    throw new CollectiveTimeoutException("rendezvous", rank, missing.get(0), verdict + refusalsSoFar());
                }
                waitForFormation(remaining);
            }
        }
    }

    /** Rank 0, giving up: tells every rank that did register why the group will not form. */
    private void abandonRegistrations(String verdict) {
        for (Registration registration : registrations) {
            if (registration != null && registration.handshake != null) {
                ChannelHandlerContext ctx = registration.ctx;
                ctx.channel().writeAndFlush(Handshake.abandon(ctx.alloc(), verdict));
            }
        }
    }

    /** Rank 0: attaches each registration to its link and sends it the table, in that order. */
    private void sendTable(List<Address> table) {
        for (int peer = 1; peer < worldSize; peer++) {
            Registration registration = registrations[peer];
            ChannelHandlerContext ctx = registration.ctx;
            PeerLink link = links[peer];
            link.attach(ctx.channel());
            // On the event loop, ahead of any send of this rank's, which queues behind this task.
            ctx.channel().eventLoop().execute(() -> {
                if (ctx.isRemoved() || !ctx.channel().isActive()) {
                    return; // it left after registering; the link's close listener has failed it
                }
                ctx.pipeline().replace(registration.handshake, "frames", new FrameDecoder(link));
                ctx.channel().writeAndFlush(Handshake.table(ctx.alloc(), table));
            });
        }
    }

    /** Waits until every higher rank has connected to this one. */
    private void awaitHigherRanks(long deadline) {
        synchronized (formation) {
            while (true) {
                List<Integer> missing = new ArrayList<>();
                for (int peer = rank + 1; peer < worldSize; peer++) {
                    if (!links[peer].isAttached()) {
                        missing.add(peer);
                    }
                }
                if (missing.isEmpty()) {
                    formed = true;
                    return;
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    throw new CollectiveTimeoutException("connect", rank, missing.get(0), "ranks " + missing
                            + " did not connect to rank " + rank + " within " + timeout + refusalsSoFar());
                }
                waitForFormation(remaining);
            }
        }
    }

    private void waitForFormation(long nanos) {
        try {
            TimeUnit.NANOSECONDS.timedWait(formation, nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("rendezvous", rank, CollectiveException.NO_RANK,
                    "interrupted while the group formed");
        }
    }

    private String refusalsSoFar() {
        return refusals.isEmpty() ? "" : "; connections refused meanwhile: " + String.join("; ", refusals);
    }

    /** A rank that registered with rank 0 and waits, connection held, for the table. */
    private static final class Registration {
        final Identity identity;
        final ChannelHandlerContext ctx;
        AcceptorHandshake handshake;

        Registration(Identity identity, ChannelHandlerContext ctx) {
            this.identity = identity;
            this.ctx = ctx;
        }
    }

    /** The acceptor's questions, answered from this rank's state. Runs on the event loop. */
    private final class Admission implements AcceptorHandshake.Admission {
        @Override
        public String admit(Identity peer, ChannelHandlerContext ctx) {
            int claimed = peer.rank();
            synchronized (formation) {
                if (closed) {
                    return "rank " + rank + " is closing";
                }
                if (peer.purpose() == Handshake.PURPOSE_REGISTER) {
                    if (rank != 0) {
                        return "rank " + rank + " is not the coordinator; rank 0 takes registrations";
                    }
                    if (formed || registrations[claimed] != null) {
                        Channel holder = registrations[claimed] != null ? registrations[claimed].ctx.channel()
                                : links[claimed].channel();
                        return "rank " + claimed + " is already taken"
                                + (holder == null ? "" : " by " + holder.remoteAddress());
                    }
                    registrations[claimed] = new Registration(peer, ctx);
                    // A registrant that goes away before the group forms frees its rank for a restart.
                    ctx.channel().closeFuture().addListener(closing -> unregister(claimed, ctx.channel()));
                    return null;
                }
                if (peer.purpose() != Handshake.PURPOSE_PEER || rank == 0 || claimed < rank) {
                    return "rank " + claimed + " may not connect to rank " + rank + " directly (purpose "
                            + peer.purpose() + "); higher ranks connect to lower ones, and only through rank 0's table";
                }
                if (admitted[claimed]) {
                    Channel holder = links[claimed].channel();
                    return "rank " + claimed + " is already connected to rank " + rank
                            + (holder == null ? "" : " from " + holder.remoteAddress());
                }
                admitted[claimed] = true;
                return null;
            }
        }

        @Override
        public void welcomed(Identity peer, AcceptorHandshake handshake, ChannelHandlerContext ctx) {
            handshakeOver(handshake);
            synchronized (formation) {
                if (peer.purpose() == Handshake.PURPOSE_REGISTER) {
                    registrations[peer.rank()].handshake = handshake;
                } else {
                    PeerLink link = links[peer.rank()];
                    link.attach(ctx.channel());
                    ctx.pipeline().replace(handshake, "frames", new FrameDecoder(link));
                }
                formation.notifyAll();
            }
        }

        @Override
        public void rejected(String remote, String why) {
            LOG.log(System.Logger.Level.WARNING, "rank {0} refused a connection from {1}: {2}", rank, remote, why);
            synchronized (formation) {
                if (refusals.size() == MAX_REMEMBERED_REFUSALS) {
                    refusals.pollFirst();
                }
                refusals.addLast(remote + ": " + why);
            }
        }
    }

    /** A handshake ended (handed over, refused or closed); it no longer counts against the cap. */
    private void handshakeOver(AcceptorHandshake handshake) {
        if (handshake.markOver()) {
            pendingHandshakes.decrementAndGet();
        }
    }

    private void unregister(int peer, Channel channel) {
        synchronized (formation) {
            if (!formed && registrations[peer] != null && registrations[peer].ctx.channel() == channel) {
                registrations[peer] = null;
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

    /** The port this rank listens on (for rank 0 the coordinator's), or -1 for a group of one. */
    public int listenPort() {
        Channel bound = listener;
        return bound == null ? -1 : ((InetSocketAddress) bound.localAddress()).getPort();
    }

    /** True if the connections run on native epoll rather than NIO. */
    public boolean usesEpoll() {
        return settings.epoll();
    }

    @Override
    public void send(int destRank, ByteBuffer data) {
        send(destRank, NO_BYTES, data);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Messages over 64 KiB are written from the callers' buffers without a copy, so this waits
     * until the socket has taken them (at most the timeout).
     */
    @Override
    public void send(int destRank, ByteBuffer header, ByteBuffer payload) {
        link("send", destRank).send(header, payload, System.nanoTime() + timeout.toNanos(), timeout);
    }

    @Override
    public void recv(int srcRank, ByteBuffer dst) {
        link("recv", srcRank).receive(dst, true, System.nanoTime() + timeout.toNanos(), timeout);
    }

    @Override
    public int recvAtMost(int srcRank, ByteBuffer dst, Duration wait) {
        TransportChecks.checkWait("recv", rank, wait);
        return link("recv", srcRank).receive(dst, false, System.nanoTime() + wait.toNanos(), wait);
    }

    @Override
    public void barrier() {
        checkOpen("barrier");
        long deadline = System.nanoTime() + timeout.toNanos();
        long epoch;
        synchronized (this) {
            epoch = ++barrierEpoch;
        }
        for (PeerLink link : links) {
            if (link != null) {
                link.sendBarrier(epoch, deadline, timeout);
            }
        }
        List<Integer> missing = new ArrayList<>();
        for (PeerLink link : links) {
            if (link != null && !link.awaitBarrier(epoch, deadline)) {
                missing.add(link.peer());
            }
        }
        if (!missing.isEmpty()) {
            throw new CollectiveTimeoutException("barrier", rank, missing.get(0), "ranks " + missing
                    + " did not reach the barrier within " + timeout);
        }
    }

    @Override
    public void close() {
        synchronized (formation) {
            if (closed) {
                return;
            }
            closed = true;
            formation.notifyAll();
        }
        List<ChannelFuture> closing = new ArrayList<>();
        for (PeerLink link : links) {
            if (link != null) {
                ChannelFuture future = link.close();
                if (future != null) {
                    closing.add(future);
                }
            }
        }
        if (listener != null) {
            closing.add(listener.close());
        }
        for (ChannelFuture future : closing) {
            future.awaitUninterruptibly(2, TimeUnit.SECONDS);
        }
        loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        for (PeerLink link : links) {
            if (link != null) {
                link.releaseQueued();
            }
        }
    }

    private PeerLink link(String operation, int peer) {
        checkOpen(operation);
        TransportChecks.checkPeer(operation, rank, worldSize, peer);
        return links[peer];
    }

    private void checkOpen(String operation) {
        TransportChecks.checkOpen(closed, operation, rank);
    }

    @Override
    public String toString() {
        return "NettyTransport{rank=" + rank + ", worldSize=" + worldSize + ", job=" + settings.jobId()
                + ", listening=" + (listener == null ? "none" : listener.localAddress()) + '}';
    }
}
