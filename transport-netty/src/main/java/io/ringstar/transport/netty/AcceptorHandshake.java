package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringstar.spi.handshake.Acceptor;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Step;
import io.ringstar.spi.handshake.Table;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The listening side of a handshake on a Netty channel: drives the shared {@link Acceptor} (which
 * challenges whoever connected and checks its proof and identity), lets the transport decide
 * ({@link Admission}) whether to take the connection, and adds the TLS rules and the time limit. Anything that
 * is not a well-behaved ringstar rank of this job is closed here, without disturbing the job.
 */
final class AcceptorHandshake extends HandshakeHandler {

    /** What the transport does with a peer that proved who it is. */
    interface Admission {
        /**
         * Called on the event loop for a peer whose proof and identity hold. Returns why the
         * connection is refused, or null after reserving the peer's rank for it.
         */
        String admit(Identity peer, ChannelHandlerContext ctx);

        /**
         * Called on the event loop once the welcome is on its way: the transport attaches the
         * connection to the peer's link, or holds it until the table of ranks can be sent.
         */
        void welcomed(Identity peer, AcceptorHandshake handshake, ChannelHandlerContext ctx);

        /** A connection that was closed before or during its handshake, for the log. */
        void rejected(String remote, String why);
    }

    private final Acceptor acceptor;
    private final Admission admission;
    private final Duration handshakeTimeout;
    /** True if the connection speaks TLS ({@link TlsAnnouncement} put the TLS handler before this one). */
    private final boolean tls;
    /** Set when the TLS handshake succeeded: only from then on do records come through TLS. */
    private boolean tlsEstablished;
    private ScheduledFuture<?> expiry;
    /** The connection, for the admission's questions; set when it becomes active. */
    private ChannelHandlerContext context;
    private final AtomicBoolean over = new AtomicBoolean();

    AcceptorHandshake(byte[] secret, Identity self, Admission admission, Duration handshakeTimeout, boolean tls) {
        super(HandshakeRecords.MAX_UNTRUSTED_RECORD);
        this.admission = admission;
        this.acceptor = new Acceptor(secret, self, peer -> admission.admit(peer, context));
        this.handshakeTimeout = handshakeTimeout;
        this.tls = tls;
    }

    /** True the first time only: the transport counts each handshake's end once. */
    boolean markOver() {
        return over.compareAndSet(false, true);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        context = ctx;
        ctx.writeAndFlush(Unpooled.wrappedBuffer(acceptor.challenge()));
        expiry = ctx.executor().schedule(() -> {
            if (!isFinished()) {
                finish();
                admission.rejected(remote(ctx), "no handshake within " + handshakeTimeout);
                ctx.close();
            }
        }, handshakeTimeout.toNanos(), TimeUnit.NANOSECONDS);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        // Gone before the handshake ended: no expiry later, and no "no handshake" in the log.
        if (expiry != null) {
            expiry.cancel(false);
        }
        if (!isFinished()) {
            finish();
            admission.rejected(remote(ctx), "it closed the connection during the handshake");
        }
        super.channelInactive(ctx);
    }

    @Override
    void onRecord(ChannelHandlerContext ctx, byte type, ByteBuf body) {
        if (tls && !tlsEstablished) {
            // The TLS handler is in place before the first byte is read and passes nothing on
            // before its handshake is done; a record here came around it and is not trusted.
            onGarbage(ctx, "a plain-text record where TLS was due");
            return;
        }
        Step step = acceptor.onRecord(type, body.nioBuffer());
        switch (step.outcome()) {
            case CONTINUE -> ctx.writeAndFlush(Unpooled.wrappedBuffer(step.reply()));
            case ADMITTED -> {
                finish();
                expiry.cancel(false);
                ctx.writeAndFlush(Unpooled.wrappedBuffer(step.reply()));
                admission.welcomed(step.peer(), this, ctx);
            }
            case REFUSED -> refuse(ctx, step.reason(), step.reply());
            default -> reject(ctx, step.reason());
        }
    }

    /** The TABLE record for the registration this handshake admitted, tagged for its connection. */
    ByteBuf table(Table table) {
        return Unpooled.wrappedBuffer(acceptor.table(table));
    }

    /** Sends the reason to the peer, closes the connection and tells the transport. */
    private void refuse(ChannelHandlerContext ctx, String reason, ByteBuffer record) {
        finish();
        if (expiry != null) {
            expiry.cancel(false);
        }
        admission.rejected(remote(ctx), reason);
        ctx.writeAndFlush(Unpooled.wrappedBuffer(record)).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    void onGarbage(ChannelHandlerContext ctx, String what) {
        reject(ctx, acceptor.onGarbage(what).reason());
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                tlsEstablished = true;
            } else if (!isFinished()) {
                // Before the close that follows it, so the log says why TLS failed, not "it closed".
                reject(ctx, TlsContexts.Failure.ofHandshake(done.cause()).message());
            }
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        TlsContexts.Failure failure = TlsContexts.Failure.of(cause);
        if (failure != null && isFinished() && !tlsEstablished) {
            // The failed TLS handshake behind this was already told to the transport.
            ctx.close();
            return;
        }
        reject(ctx, failure != null ? failure.message() : "its connection failed during the handshake: " + cause);
    }

    private void reject(ChannelHandlerContext ctx, String why) {
        finish();
        if (expiry != null) {
            expiry.cancel(false);
        }
        admission.rejected(remote(ctx), why);
        ctx.close();
    }

    private static String remote(ChannelHandlerContext ctx) {
        return String.valueOf(ctx.channel().remoteAddress());
    }
}
