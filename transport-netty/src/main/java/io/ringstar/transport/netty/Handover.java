package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.ssl.SslHandler;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLEngine;

/**
 * Last in a connection's pipeline once its handshake is done, until the transport takes the socket
 * over: keeps whatever arrives behind the handshake (the peer may send its first frames at once),
 * then, in {@link #takeOver}, stops Netty from reading, takes the TLS engine out of the pipeline
 * with any ciphertext it had not decrypted yet, and deregisters the connection from its event loop.
 * From then on the socket belongs to the transport's {@link SocketLink}, which starts with the
 * bytes kept here.
 */
final class Handover extends ChannelInboundHandlerAdapter {
    /**
     * Pause between two looks at whether the event loop has flushed the handshake's last bytes (until the
     * deadline).
     */
    private static final long FLUSH_POLL_MILLIS = 1;

    /** What the transport takes over. */
    record Taken(SocketChannel socket, ByteBuffer plain, SSLEngine engine, ByteBuffer cipher) {
    }

    private final int peer;
    private final Channel channel;
    /**
     * Plain bytes that came behind the handshake; after the TLS handler is removed, ciphertext goes to
     * {@link #cipher}.
     */
    private ByteBuffer plain = ByteBuffer.allocate(0);
    private ByteBuffer cipher = ByteBuffer.allocate(0);
    private boolean tlsRemoved;
    private SSLEngine engine;

    Handover(int peer, Channel channel) {
        this.peer = peer;
        this.channel = channel;
    }

    Channel channel() {
        return channel;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf bytes = (ByteBuf) msg;
        try {
            if (tlsRemoved) {
                cipher = append(cipher, bytes);
            } else {
                plain = append(plain, bytes);
            }
        } finally {
            bytes.release();
        }
    }

    private static ByteBuffer append(ByteBuffer kept, ByteBuf more) {
        int count = more.readableBytes();
        ByteBuffer grown = ByteBuffer.allocate(kept.remaining() + count);
        grown.put(kept).put(more.nioBuffer()).flip();
        return grown;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // The socket's own reads will show the failure once the transport has it.
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // Likewise: the transport reads the end of the stream from the socket.
    }

    /**
     * Takes the connection away from Netty, waiting at most until {@code deadline}: once the event
     * loop has written what the handshake still had to send, reading stops, the TLS handler (if
     * any) leaves the pipeline with its engine, and the connection is deregistered.
     */
    Taken takeOver(int rank, Deadline deadline) {
        try {
            while (!channel.eventLoop().submit(this::detachWhenFlushed).get(deadline.remainingNanos(),
                    TimeUnit.NANOSECONDS)) {
                if (deadline.passed()) {
                    throw new TimeoutException();
                }
                Thread.sleep(FLUSH_POLL_MILLIS);
            }
            if (!channel.deregister().await(Math.max(1, deadline.remainingNanos()), TimeUnit.NANOSECONDS)) {
                throw new TimeoutException();
            }
        } catch (TimeoutException e) {
            throw new CollectiveTimeoutException("connect", rank, peer, "the connection to rank " + peer
                    + " could not be taken over from Netty's event loop within the timeout of " + deadline.timeout());
        } catch (ExecutionException e) {
            throw new CollectiveException("connect", rank, peer, "taking over the connection to rank " + peer
                    + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("connect", rank, peer, "interrupted while taking over the connection to rank "
                    + peer, e);
        }
        // The event loop's last task for this channel happened before the futures completed.
        return new Taken(((HandoverSocketChannel) channel).socket(), plain, engine, cipher);
    }

    /** On the event loop: false while handshake bytes wait to be written; else detaches and returns true. */
    private boolean detachWhenFlushed() {
        ChannelOutboundBuffer unsent = channel.unsafe().outboundBuffer();
        if (channel.isActive() && unsent != null && !unsent.isEmpty()) {
            channel.flush();
            return false;
        }
        channel.config().setAutoRead(false);
        SslHandler tls = channel.pipeline().get(SslHandler.class);
        if (tls != null) {
            engine = tls.engine();
            // Removing the handler hands on its undecrypted bytes, as ciphertext, to this handler.
            tlsRemoved = true;
            channel.pipeline().remove(tls);
        }
        return true;
    }
}
