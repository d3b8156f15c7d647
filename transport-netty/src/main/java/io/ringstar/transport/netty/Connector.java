package io.ringstar.transport.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Table;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The connecting side of forming a group: connects to a peer (rank 0 to register, or a lower rank)
 * and runs the {@link InitiatorHandshake}, retrying with back-off while the peer is not there yet,
 * until the deadline. A refusal ends it at once with a {@link HandshakeException}.
 */
final class Connector {
    private static final Duration LONGEST_BACKOFF = Duration.ofSeconds(1);
    /** The longest one connection attempt may take before the next one, with back-off. */
    private static final long CONNECT_ATTEMPT_MILLIS = 5000;

    private final int rank;
    private final Duration timeout;
    private final NettySettings settings;
    private final EventLoopGroup loops;
    private final InitiatorHandshake.Sink sink;
    private final BooleanSupplier closing;

    Connector(int rank, Duration timeout, NettySettings settings, EventLoopGroup loops, InitiatorHandshake.Sink sink,
            BooleanSupplier closing) {
        this.rank = rank;
        this.timeout = timeout;
        this.settings = settings;
        this.loops = loops;
        this.sink = sink;
        this.closing = closing;
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
    Table connect(int peer, String host, int port, Identity identity, long deadline) {
        String operation = identity.purpose() == HandshakeRecords.PURPOSE_REGISTER ? "rendezvous" : "connect";
        String address = host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
        long backoffNanos = TimeUnit.MILLISECONDS.toNanos(20);
        String lastProblem = "no attempt was made";
        while (!closing.getAsBoolean()) {
            InitiatorHandshake handshake = new InitiatorHandshake(settings.secret(), identity, peer, sink,
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
                    throw new CollectiveException(operation, rank, peer, "interrupted while connecting to rank "
                            + peer);
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

}
