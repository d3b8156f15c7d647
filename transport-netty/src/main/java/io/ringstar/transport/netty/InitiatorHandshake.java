package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Initiator;
import io.ringstar.spi.handshake.Step;
import io.ringstar.spi.handshake.Table;
import java.util.concurrent.CompletableFuture;

/**
 * The connecting side of a handshake on a Netty channel: drives the shared {@link Initiator}
 * (which answers the acceptor's challenge, checks its proof and welcome and, for a registration
 * with rank 0, the table of all ranks) and adds the TLS rules. Then it hands the connection to the
 * transport (which puts a {@link Handover} in its place) and completes {@link #result()} with the
 * table (or null).
 */
final class InitiatorHandshake extends HandshakeHandler {

    /** The acceptor said no; trying again would get the same answer. */
    static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** Rank 0 gave up forming the group; the reason names the ranks that never came. */
    static final class Abandoned extends RuntimeException {
        Abandoned(String message) {
            super(message, null, false, false);
        }
    }

    /** The connection dropped or misbehaved before the handshake finished; a new attempt may work. */
    static final class Broken extends RuntimeException {
        Broken(String message) {
            super(message, null, false, false);
        }
    }

    private final Initiator initiator;
    /** What the transport does with the connection once the handshake is done. */
    interface Sink {
        /** Puts a {@link Handover} for {@code peer} in place of {@code handshake}; on the event loop. */
        void handOver(int peer, ChannelHandlerContext ctx, HandshakeHandler handshake);
    }

    private final int peer;
    private final Sink sink;
    /** This rank's TLS, or null for plain TCP. */
    private final TlsContexts tls;
    private boolean tlsStarted;
    /** Set when the TLS handshake succeeded: only from then on do records come through TLS. */
    private boolean tlsEstablished;
    private final CompletableFuture<Table> result = new CompletableFuture<>();
    /** Set by the first record of the handshake proper: a TLS announcement after it is out of turn. */
    private boolean started;

    InitiatorHandshake(byte[] secret, Identity self, int peer, Sink sink, TlsContexts tls) {
        super(HandshakeRecords.MAX_UNTRUSTED_RECORD);
        this.initiator = new Initiator(secret, self, peer);
        this.peer = peer;
        this.sink = sink;
        this.tls = tls;
    }

    /** Completes with the table (registration) or null (peer connection) once the link carries frames. */
    CompletableFuture<Table> result() {
        return result;
    }

    @Override
    void onRecord(ChannelHandlerContext ctx, byte type, ByteBuf body) {
        if (type == HandshakeRecords.TLS && !tlsStarted && !started) {
            onTls(ctx, body);
        } else if (tls != null && !tlsStarted) {
            fail(ctx, new Refused("it does not use TLS, and this rank does (" + tls.files() + "); give every rank "
                    + TlsContexts.OPTIONS + ", or none of them"));
        } else if (tls != null && !tlsEstablished) {
            // The TLS handler passes nothing on before its handshake is done, so this came around it.
            fail(ctx, new Refused("it sent plain-text records after announcing TLS"));
        } else {
            started = true;
            act(ctx, initiator.onRecord(type, body.nioBuffer()));
        }
    }

    private void act(ChannelHandlerContext ctx, Step step) {
        switch (step.outcome()) {
            case CONTINUE -> {
                if (step.reply() != null) {
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(step.reply()));
                }
                // Rank 0 is trusted once it welcomed this rank: the table may be longer than an untrusted record.
                limitRecords(initiator.recordLimit());
            }
            case DONE -> handOver(ctx, step.table());
            case ABANDONED -> fail(ctx, new Abandoned(step.reason()));
            case BROKEN -> fail(ctx, new Broken(step.reason()));
            default -> fail(ctx, new Refused(step.reason()));
        }
    }

    /** The acceptor speaks TLS: start it (the TLS handler goes before this one), or say why this rank cannot. */
    private void onTls(ChannelHandlerContext ctx, ByteBuf body) {
        String wrong = HandshakeRecords.checkTls(body.nioBuffer());
        if (wrong != null) {
            fail(ctx, new Refused(wrong));
            return;
        }
        if (tls == null) {
            fail(ctx, new Refused("it requires TLS, and this rank has none; give every rank " + TlsContexts.OPTIONS));
            return;
        }
        tlsStarted = true;
        // Whatever the acceptor sent behind this record did not pass through TLS: it is refused.
        endPlainText();
        ctx.pipeline().addBefore(ctx.name(), "tls", tls.initiator().newHandler(ctx.alloc()));
    }

    private void handOver(ChannelHandlerContext ctx, Table table) {
        assert tls == null || tlsEstablished : "a TLS rank's connection handed over before TLS was established";
        finish();
        sink.handOver(peer, ctx, this);
        result.complete(table);
    }

    private void fail(ChannelHandlerContext ctx, RuntimeException why) {
        finish();
        result.completeExceptionally(why);
        ctx.close();
    }

    @Override
    void onGarbage(ChannelHandlerContext ctx, String what) {
        fail(ctx, new Refused(initiator.onGarbage(what).reason()));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        result.completeExceptionally(new Broken("the connection closed during the handshake"));
        super.channelInactive(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof SslHandshakeCompletionEvent done) {
            if (done.isSuccess()) {
                tlsEstablished = true;
            } else {
                // Before the close that follows it, so the reason is TLS's, not "the connection closed".
                fail(ctx, tlsFailure(TlsContexts.Failure.ofHandshake(done.cause())));
            }
        }
        super.userEventTriggered(ctx, event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        TlsContexts.Failure failure = TlsContexts.Failure.of(cause);
        fail(ctx, failure != null ? tlsFailure(failure)
                : new Broken("the connection failed during the handshake: " + cause));
    }

    /** A refused certificate is no hiccup to retry; a TLS handshake cut short or timed out may be. */
    private static RuntimeException tlsFailure(TlsContexts.Failure failure) {
        return failure.permanent() ? new Refused(failure.message()) : new Broken(failure.message());
    }
}
