package io.ringstar.transport.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Table;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Forms a {@link NettyTransport}'s group with Netty, in two steps: {@link #listen} binds the
 * listener (whose accepted connections run the {@link AcceptorHandshake}, and so already take rank
 * 0's registrations), then {@link #form} waits for rank 0's registrations and sends the table, or
 * makes the connections to lower ranks ({@link Connector}), with the {@link Handover} of each
 * connection once its handshake is done. It owns the event loops, the listener and every
 * connection until the transport takes them over; {@link #closeChannels()} and {@link #stop} end
 * them. The forming thread blocks in {@link #form}; the rest runs on the event loops, under one lock.
 */
final class GroupFormation {
    // The transport's logger: these are its messages.
    private static final System.Logger LOG = System.getLogger(NettyTransport.class.getName());
    private static final int MAX_REMEMBERED_REFUSALS = 8;

    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final NettySettings settings;
    private final EventLoopGroup loops;
    private final List<Thread> loopThreads = new CopyOnWriteArrayList<>();
    private final Identity self;
    private final Connector connector;
    private final Object formation = new Object();
    /** By peer: the connection once its handshake is done, until it is taken over. Under {@link #formation}. */
    private final Handover[] handovers;
    /** Rank 0, while forming: the registrations waiting for the table, by rank. */
    private final Registration[] registrations;
    /** Ranks whose connection an acceptor has admitted (a second claim is refused). */
    private final boolean[] admitted;
    private final ArrayDeque<String> refusals = new ArrayDeque<>();
    private boolean formed;
    private Channel listener;
    /** This rank's identity with the port it listens on, once {@link #listen} has bound it. */
    private Identity listening;
    private volatile boolean closing;

    GroupFormation(int rank, int worldSize, Duration timeout, NettySettings settings) {
        this.rank = rank;
        this.worldSize = worldSize;
        this.timeout = timeout;
        this.settings = settings;
        this.handovers = new Handover[worldSize];
        this.registrations = new Registration[worldSize];
        this.admitted = new boolean[worldSize];
        this.self = new Identity(HandshakeRecords.PURPOSE_PEER, settings.jobId(), worldSize, rank,
                CollectiveException.NO_RANK, settings.advertisedHost(), 0, null);
        DefaultThreadFactory names = new DefaultThreadFactory("ringstar-netty-rank" + rank, true);
        this.loops = new MultiThreadIoEventLoopGroup(settings.ioThreads(), runnable -> {
            Thread thread = names.newThread(runnable);
            loopThreads.add(thread);
            return thread;
        }, NioIoHandler.newFactory());
        this.connector = new Connector(rank, timeout, settings, loops, this::handOver, () -> closing);
    }

    /**
     * Binds the listener: rank 0's at the coordinator's port (any free one if that is 0), another
     * rank's at its {@code port} option. From here on connections are admitted, so ranks that come
     * before {@link #form} register and wait.
     *
     * @throws CollectiveException if this rank cannot listen where it must
     */
    void listen() {
        int port = rank == 0 ? settings.coordinatorPort() : settings.port();
        listener = new Listener(rank, settings, loops, self, new Admission()).bind(port);
        listening = self.atPort(((InetSocketAddress) listener.localAddress()).getPort());
    }

    /**
     * Forms the group, once {@link #listen} has bound the listener: returns once this rank holds a
     * handed-over connection to every other rank.
     *
     * @param deadline in {@link System#nanoTime()} terms
     */
    void form(long deadline) {
        formGroup(deadline);
    }

    /** The connection to {@code peer}, once {@link #form} has returned. */
    Handover handover(int peer) {
        synchronized (formation) {
            return handovers[peer];
        }
    }

    /** This rank's identity with the address and port it listens on, once {@link #listen} has bound it. */
    Identity listening() {
        return listening;
    }

    /** The port this rank listens on, or -1 if it does not (yet). */
    int listenPort() {
        Channel bound = listener;
        return bound == null ? -1 : ((InetSocketAddress) bound.localAddress()).getPort();
    }

    /** Where this rank listens, or null. */
    SocketAddress listenAddress() {
        Channel bound = listener;
        return bound == null ? null : bound.localAddress();
    }

    private void formGroup(long deadline) {
        if (rank == 0) {
            Table table = awaitRegistrations(listening, deadline);
            sendTable(table);
            return;
        }
        Identity registering = listening.forPurpose(HandshakeRecords.PURPOSE_REGISTER);
        Table table = connector.connect(0, settings.coordinatorAddress().getHostAddress(), settings.coordinatorPort(),
                registering, deadline);
        for (int peer = 1; peer < rank; peer++) {
            Identity there = table.ranks().get(peer);
            connector.connect(peer, there.host(), there.port(), listening, deadline);
        }
        awaitHigherRanks(deadline);
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
                    String verdict = "ranks " + missing + " did not register with rank 0 at " + listening.address()
                            + " within " + timeout;
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


    private void unregister(int peer, Channel channel) {
        synchronized (formation) {
            if (!formed && registrations[peer] != null && registrations[peer].ctx.channel() == channel) {
                registrations[peer] = null;
            }
        }
    }

    // ---- closing ----

    /**
     * Stops forming: wakes the forming thread and starts closing every connection not taken over
     * yet and the listener; returns their closings, for {@link #stop}.
     */
    List<ChannelFuture> closeChannels() {
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
        return closingChannels;
    }

    /** Waits (boundedly) for {@code closingChannels}, then stops the event loops and waits for their threads. */
    void stop(List<ChannelFuture> closingChannels) {
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
    }
}
