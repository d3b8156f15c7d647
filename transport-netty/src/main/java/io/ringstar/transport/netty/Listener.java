package io.ringstar.transport.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.ringstar.CollectiveException;
import io.ringstar.spi.handshake.Identity;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A rank's listening socket: every accepted connection runs an {@link AcceptorHandshake} (behind a
 * {@link TlsAnnouncement} with TLS), answered by the transport's {@link AcceptorHandshake.Admission};
 * at most {@value #MAX_PENDING_HANDSHAKES} at a time, so a flood of connections is closed instead
 * of piling up. Binds only the address the settings give.
 */
final class Listener {
    // The transport's logger: these are its messages.
    private static final System.Logger LOG = System.getLogger(NettyTransport.class.getName());
    /** Binding a local port is immediate; this bound only keeps a broken event loop from hanging us. */
    private static final long BIND_WAIT_MILLIS = 10_000;
    /** Connections that may be in their handshake at once; more are closed at once (a flood, not a job). */
    private static final int MAX_PENDING_HANDSHAKES = 64;

    private final int rank;
    private final NettySettings settings;
    private final EventLoopGroup loops;
    private final Identity self;
    private final AcceptorHandshake.Admission admission;
    private final AtomicInteger pendingHandshakes = new AtomicInteger();

    Listener(int rank, NettySettings settings, EventLoopGroup loops, Identity self,
            AcceptorHandshake.Admission admission) {
        this.rank = rank;
        this.settings = settings;
        this.loops = loops;
        this.self = self;
        this.admission = counted(admission);
    }

    /**
     * Listens on the settings' bind address at {@code port} (0 for any free one).
     *
     * @throws CollectiveException if it cannot, or binding does not finish in time
     */
    Channel bind(int port) {
        ServerBootstrap server = new ServerBootstrap()
                .group(loops)
                .channelFactory(HandoverSocketChannel.Server::new)
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, 128)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        accepted(channel);
                    }
                });
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
        return bound.channel();
    }

    private void accepted(SocketChannel channel) {
        if (pendingHandshakes.incrementAndGet() > MAX_PENDING_HANDSHAKES) {
            pendingHandshakes.decrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "rank {0} closed a connection from {1}: {2} handshakes"
                    + " are already under way", rank, channel.remoteAddress(), MAX_PENDING_HANDSHAKES);
            channel.close();
            return;
        }
        AcceptorHandshake handshake = new AcceptorHandshake(settings.secret(), self, admission,
                settings.handshakeTimeout(), settings.tls() != null);
        if (settings.tls() != null) {
            channel.pipeline().addLast("tls-announcement", new TlsAnnouncement(settings.tls().acceptor()));
        }
        channel.pipeline().addLast("handshake", handshake);
        channel.closeFuture().addListener(closed -> handshakeOver(handshake));
    }

    /** {@code admission}, counting each welcomed handshake's end before the transport hears of it. */
    private AcceptorHandshake.Admission counted(AcceptorHandshake.Admission admission) {
        return new AcceptorHandshake.Admission() {
            @Override
            public String admit(Identity peer, ChannelHandlerContext ctx) {
                return admission.admit(peer, ctx);
            }

            @Override
            public void welcomed(Identity peer, AcceptorHandshake handshake, ChannelHandlerContext ctx) {
                handshakeOver(handshake);
                admission.welcomed(peer, handshake, ctx);
            }

            @Override
            public void rejected(String remote, String why) {
                admission.rejected(remote, why);
            }
        };
    }

    /** A handshake ended (handed over, refused or closed); it no longer counts against the cap. */
    private void handshakeOver(AcceptorHandshake handshake) {
        if (handshake.markOver()) {
            pendingHandshakes.decrementAndGet();
        }
    }
}
