package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringstar.spi.HandshakeProofs;
import io.ringstar.transport.netty.Handshake.Identity;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The listening side of a handshake: challenges whoever connected, checks its proof and identity,
 * and lets the transport decide ({@link Admission}) whether to take the connection. Anything that
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

    private final byte[] secret;
    private final Identity self;
    private final Admission admission;
    private final Duration handshakeTimeout;
    /** True if the connection speaks TLS ({@link TlsAnnouncement} put the TLS handler before this one). */
    private final boolean tls;
    /** Set when the TLS handshake succeeded: only from then on do records come through TLS. */
    private boolean tlsEstablished;
    private final byte[] challengeNonce = HandshakeProofs.newNonce();
    private byte[] helloNonce;
    private ScheduledFuture<?> expiry;
    private final AtomicBoolean over = new AtomicBoolean();

    AcceptorHandshake(byte[] secret, Identity self, Admission admission, Duration handshakeTimeout, boolean tls) {
        super(Handshake.MAX_UNTRUSTED_RECORD);
        this.secret = secret;
        this.self = self;
        this.admission = admission;
        this.handshakeTimeout = handshakeTimeout;
        this.tls = tls;
    }

    /** True the first time only: the transport counts each handshake's end once. */
    boolean markOver() {
        return over.compareAndSet(false, true);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        ctx.writeAndFlush(Handshake.challenge(ctx.alloc(), challengeNonce));
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
        } else if (helloNonce == null && type == Handshake.HELLO) {
            onHello(ctx, body);
        } else if (helloNonce != null && type == Handshake.IDENTIFY) {
            onIdentify(ctx, body);
        } else {
            onGarbage(ctx, "a handshake record of type " + type + " out of turn");
        }
    }

    private void onHello(ChannelHandlerContext ctx, ByteBuf body) {
        if (body.readIntLE() != Handshake.MAGIC) {
            onGarbage(ctx, "bytes that lack the magic; it is not a ringstar rank");
            return;
        }
        short version = body.readShortLE();
        if (version != Handshake.VERSION) {
            refuse(ctx, "it speaks protocol version " + version + ", this rank speaks " + Handshake.VERSION);
            return;
        }
        boolean peerHasSecret = body.readBoolean();
        byte[] nonce = new byte[Handshake.NONCE_BYTES];
        body.readBytes(nonce);
        byte[] proof = new byte[Handshake.PROOF_BYTES];
        body.readBytes(proof);
        if (secret != null && !peerHasSecret) {
            refuse(ctx, "this job requires a shared secret and the peer has none");
            return;
        }
        if (secret == null && peerHasSecret) {
            refuse(ctx, "the peer has a shared secret and this job has none");
            return;
        }
        if (!HandshakeProofs.holds(proof, secret, Handshake.HELLO_LABEL, challengeNonce, nonce)) {
            refuse(ctx, "authentication failed (wrong secret)");
            return;
        }
        helloNonce = nonce;
        ctx.writeAndFlush(Handshake.proof(ctx.alloc(), secret, challengeNonce, helloNonce));
    }

    private void onIdentify(ChannelHandlerContext ctx, ByteBuf body) {
        Identity peer = Handshake.readIdentity(body, Handshake.IDENTIFY, secret, challengeNonce, helloNonce);
        if (peer == null) {
            onGarbage(ctx, "an identity whose tag does not hold (altered on the way?)");
            return;
        }
        String refusal = checkIdentity(peer);
        if (refusal == null) {
            refusal = admission.admit(peer, ctx);
        }
        if (refusal != null) {
            refuse(ctx, refusal);
            return;
        }
        finish();
        expiry.cancel(false);
        ctx.writeAndFlush(Handshake.identity(ctx.alloc(), Handshake.WELCOME, secret, helloNonce, challengeNonce,
                self.aimedAt(peer.rank())));
        admission.welcomed(peer, this, ctx);
    }

    private String checkIdentity(Identity peer) {
        if (!peer.jobId().equals(self.jobId())) {
            return "it belongs to job '" + peer.jobId() + "', this rank to job '" + self.jobId() + "'";
        }
        if (peer.worldSize() != self.worldSize()) {
            return "it has world size " + peer.worldSize() + ", this job " + self.worldSize();
        }
        if (peer.rank() < 0 || peer.rank() >= self.worldSize() || peer.rank() == self.rank()) {
            return "it claims rank " + peer.rank() + ", which is not another rank of this group of " + self.worldSize();
        }
        if (peer.targetRank() != self.rank()) {
            return "it meant to reach rank " + peer.targetRank() + ", and this is rank " + self.rank();
        }
        return null;
    }

    /** Sends the reason to the peer, closes the connection and tells the transport. */
    private void refuse(ChannelHandlerContext ctx, String reason) {
        finish();
        if (expiry != null) {
            expiry.cancel(false);
        }
        admission.rejected(remote(ctx), reason);
        ctx.writeAndFlush(Handshake.refuse(ctx.alloc(), reason)).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    void onGarbage(ChannelHandlerContext ctx, String what) {
        reject(ctx, "it sent " + what);
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
