package io.ringstar.transport.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.spi.Deadline;
import io.ringstar.spi.NetworkOptions;
import io.ringstar.spi.PeerChannel;
import io.ringstar.spi.PeerTransport;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Table;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
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

    private static final System.Logger LOG = System.getLogger(NettyTransport.class.getName());
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
    /** By peer: the connection once its handshake is done, until it is taken over. Under {@link #formation}. */
    private final Handover[] handovers;
    private final SocketLink[] links;
    private final Selector selector;
    /** What {@link #progress} does with each ready key; one object, so a round allocates nothing. */
    private final Consumer<SelectionKey> onReady = this::onReady;
    private int moved;
    private final EventLoopGroup loops;
    private final List<Thread> loopThreads = new java.util.concurrent.CopyOnWriteArrayList<>();
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
    private volatile boolean closing;

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
        super(NAME, config.rank(), config.worldSize(), config.timeout());
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.timeout = config.timeout();
        this.settings = NettySettings.from(config, System.getenv());
        this.handovers = new Handover[worldSize];
        this.links = new SocketLink[worldSize];
        this.registrations = new Registration[worldSize];
        this.admitted = new boolean[worldSize];
        this.self = new Identity(HandshakeRecords.PURPOSE_PEER, settings.jobId(), worldSize, rank,
                CollectiveException.NO_RANK, settings.advertisedHost(), 0, null);
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new CollectiveException("connect", rank, CollectiveException.NO_RANK, "cannot open a selector: " + e,
                    e);
        }
        DefaultThreadFactory names = new DefaultThreadFactory("ringstar-netty-rank" + rank, true);
        this.loops = new MultiThreadIoEventLoopGroup(settings.ioThreads(), runnable -> {
            Thread thread = names.newThread(runnable);
            loopThreads.add(thread);
            return thread;
        }, NioIoHandler.newFactory());
        // Mutual TLS authenticates the ranks too: only a job with neither is open to anyone.
        if (settings.secret() == null && settings.tls() == null && worldSize > 1) {
            NetworkOptions.warnUnauthenticated(LOG, NAME, rank, settings.jobId(),
                    "mutual TLS (--tls-cert, --tls-key, --tls-trust)");
        }
        Deadline deadline = Deadline.after(timeout);
        try {
            if (worldSize > 1) {
                formGroup(deadline.remainingNanos() + System.nanoTime());
                takeOver(deadline);
            }
            start(links);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Takes every connection over from Netty and makes it a {@link SocketLink} on this transport's selector. */
    private void takeOver(Deadline deadline) {
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer == rank) {
                continue;
            }
            Handover handover;
            synchronized (formation) {
                handover = handovers[peer];
            }
            Handover.Taken taken = handover.takeOver(rank, deadline);
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

    // ---- forming the group ----

    private void formGroup(long deadline) {
        Identity listening = listen();
        if (rank == 0) {
            Table table = awaitRegistrations(listening, deadline);
            sendTable(table);
            return;
        }
        Identity registering = listening.forPurpose(HandshakeRecords.PURPOSE_REGISTER);
        Table table = connect(0, settings.coordinatorAddress().getHostAddress(), settings.coordinatorPort(),
                registering, deadline);
        for (int peer = 1; peer < rank; peer++) {
            Identity there = table.ranks().get(peer);
            connect(peer, there.host(), there.port(), listening, deadline);
        }
        awaitHigherRanks(deadline);
    }

    /** Starts the listener; returns this rank's identity with the address it listens on. */
    private Identity listen() {
        int port = rank == 0 ? settings.coordinatorPort() : settings.port();
        ServerBootstrap server = new ServerBootstrap()
                .group(loops)
                .channelFactory(HandoverSocketChannel.Server::new)
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
        return self.atPort(boundPort);
    }

    private void configure(ServerBootstrap server) {
        server.childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true);
    }

    private Bootstrap client(InitiatorHandshake handshake, long deadline) {
        long connectMillis = Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()),
                CONNECT_ATTEMPT_MILLIS));
        return new Bootstrap()
                .group(loops)
                .channelFactory(HandoverSocketChannel::new)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectMillis)
                .handler(handshake);
    }

    /**
     * Connects to {@code peer} at {@code address} and runs the handshake, retrying with back-off
     * while the peer is not there yet.
     *
     * @return for a registration, the table of all ranks; otherwise null
     */
    private Table connect(int peer, String host, int port, Identity identity, long deadline) {
        String operation = identity.purpose() == HandshakeRecords.PURPOSE_REGISTER ? "rendezvous" : "connect";
        String address = host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
        long backoffNanos = TimeUnit.MILLISECONDS.toNanos(20);
        String lastProblem = "no attempt was made";
        while (!closing) {
            InitiatorHandshake handshake = new InitiatorHandshake(settings.secret(), identity, peer, this::handOver,
                    settings.tls());
            ChannelFuture connecting = client(handshake, deadline).connect(host, port);
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
    private Table awaitRegistrations(Identity listening, long deadline) {
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
                    List<Identity> ranks = new ArrayList<>(worldSize);
                    ranks.add(listening);
                    for (int peer = 1; peer < worldSize; peer++) {
                        ranks.add(registrations[peer].identity);
                    }
                    // Aeron draws its session ids from the nonce; Netty has no use for it.
                    return new Table(0, ranks);
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
                ctx.channel().writeAndFlush(Unpooled.wrappedBuffer(HandshakeRecords.abandon(verdict)));
            }
        }
    }

    /**
     * Rank 0: hands each registration's connection over and sends it the table, in that order; the
     * take-over waits until the table is written. A rank that left after registering makes the
     * take-over of its connection fail, and with it this rank's constructor, naming that rank.
     */
    private void sendTable(Table table) {
        for (int peer = 1; peer < worldSize; peer++) {
            Registration registration = registrations[peer];
            ChannelHandlerContext ctx = registration.ctx;
            int registrant = peer;
            synchronized (formation) {
                handovers[peer] = new Handover(peer, ctx.channel());
            }
            ctx.channel().eventLoop().execute(() -> {
                if (ctx.isRemoved() || !ctx.channel().isActive()) {
                    return;
                }
                ctx.pipeline().replace(registration.handshake, "handover", handovers[registrant]);
                ctx.channel().writeAndFlush(registration.handshake.table(table));
            });
        }
    }

    /**
     * A handshake is done: a {@link Handover} takes the handshake handler's place and keeps whatever
     * the peer sends from now on, until the group has formed and the connection is taken over. On
     * the event loop.
     */
    private void handOver(int peer, ChannelHandlerContext ctx, HandshakeHandler handshake) {
        Handover handover = new Handover(peer, ctx.channel());
        ctx.pipeline().replace(handshake, "handover", handover);
        synchronized (formation) {
            handovers[peer] = handover;
            formation.notifyAll();
        }
    }

    /** Waits until every higher rank has connected to this one. */
    private void awaitHigherRanks(long deadline) {
        synchronized (formation) {
            while (true) {
                List<Integer> missing = new ArrayList<>();
                for (int peer = rank + 1; peer < worldSize; peer++) {
                    if (handovers[peer] == null) {
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
                if (closing) {
                    return "rank " + rank + " is closing";
                }
                if (peer.purpose() == HandshakeRecords.PURPOSE_REGISTER) {
                    if (rank != 0) {
                        return "rank " + rank + " is not the coordinator; rank 0 takes registrations";
                    }
                    if (formed || registrations[claimed] != null) {
                        Channel holder = registrations[claimed] != null ? registrations[claimed].ctx.channel()
                                : handovers[claimed] != null ? handovers[claimed].channel() : null;
                        return "rank " + claimed + " is already taken"
                                + (holder == null ? "" : " by " + holder.remoteAddress());
                    }
                    registrations[claimed] = new Registration(peer, ctx);
                    // A registrant that goes away before the group forms frees its rank for a restart.
                    ctx.channel().closeFuture().addListener(closing -> unregister(claimed, ctx.channel()));
                    return null;
                }
                if (peer.purpose() != HandshakeRecords.PURPOSE_PEER || rank == 0 || claimed < rank) {
                    return "rank " + claimed + " may not connect to rank " + rank + " directly (purpose "
                            + peer.purpose() + "); higher ranks connect to lower ones, and only through rank 0's table";
                }
                if (admitted[claimed]) {
                    Channel holder = handovers[claimed] != null ? handovers[claimed].channel() : null;
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
                if (peer.purpose() == HandshakeRecords.PURPOSE_REGISTER) {
                    registrations[peer.rank()].handshake = handshake;
                    formation.notifyAll();
                } else {
                    handOver(peer.rank(), ctx, handshake);
                }
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

    // ---- the data path ----

    /** The port this rank listens on (for rank 0 the coordinator's), or -1 for a group of one. */
    public int listenPort() {
        Channel bound = listener;
        return bound == null ? -1 : ((InetSocketAddress) bound.localAddress()).getPort();
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
        synchronized (formation) {
            closing = true;
            formation.notifyAll();
        }
        List<ChannelFuture> closingChannels = new ArrayList<>();
        synchronized (formation) {
            for (Handover handover : handovers) {
                if (handover != null && handover.channel().isRegistered()) {
                    closingChannels.add(handover.channel().close());
                }
            }
            for (Registration registration : registrations) {
                if (registration != null) {
                    closingChannels.add(registration.ctx.channel().close());
                }
            }
        }
        if (listener != null) {
            closingChannels.add(listener.close());
        }
        for (SocketLink link : links) {
            // Links made before a failed set-up never reached the skeleton, which closes the others.
            if (link != null) {
                link.close();
            }
        }
        for (ChannelFuture future : closingChannels) {
            future.awaitUninterruptibly(2, TimeUnit.SECONDS);
        }
        loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        // The loops' termination is announced a moment before their threads end: wait for those too.
        for (Thread thread : loopThreads) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        try {
            selector.close();
        } catch (IOException e) {
            // Nothing is left to read from it.
        }
    }

    @Override
    public String toString() {
        return "NettyTransport{rank=" + rank + ", worldSize=" + worldSize + ", job=" + settings.jobId()
                + ", listening=" + (listener == null ? "none" : listener.localAddress()) + '}';
    }
}
