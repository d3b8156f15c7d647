package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.ringstar.spi.HandshakeProofs;
import io.ringstar.transport.netty.Handshake.Address;
import io.ringstar.transport.netty.Handshake.Identity;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The connecting side of a handshake: answers the acceptor's challenge with this rank's proof and
 * identity, checks the acceptor's proof and identity, and, for a registration with rank 0, waits
 * for the table of all ranks. Then it hands the connection to the transport (which puts a
 * {@link Handover} in its place) and completes {@link #result()} with the table (or an empty list).
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

    private final byte[] secret;
    private final Identity self;
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
    private final CompletableFuture<List<Address>> result = new CompletableFuture<>();
    private byte[] challengeNonce;
    private byte[] helloNonce;
    private boolean proven;
    private boolean welcomed;

    InitiatorHandshake(byte[] secret, Identity self, int peer, Sink sink, TlsContexts tls) {
        super(Handshake.MAX_UNTRUSTED_RECORD);
        this.secret = secret;
        this.self = self;
        this.peer = peer;
        this.sink = sink;
        this.tls = tls;
    }

    /** Completes with the table (registration) or an empty list (peer connection) once the link carries frames. */
    CompletableFuture<List<Address>> result() {
        return result;
    }

    @Override
    void onRecord(ChannelHandlerContext ctx, byte type, ByteBuf body) {
        if (type == Handshake.TLS && !tlsStarted && challengeNonce == null) {
            onTls(ctx, body);
        } else if (tls != null && !tlsStarted) {
            fail(ctx, new Refused("it does not use TLS, and this rank does (" + tls.files() + "); give every rank "
                    + TlsContexts.OPTIONS + ", or none of them"));
        } else if (tls != null && !tlsEstablished) {
            // The TLS handler passes nothing on before its handshake is done, so this came around it.
            fail(ctx, new Refused("it sent plain-text records after announcing TLS"));
        } else if (type == Handshake.REFUSE) {
            fail(ctx, new Refused("refused: " + Handshake.readString(body)));
        } else if (welcomed && type == Handshake.ABANDON) {
            fail(ctx, new Abandoned(Handshake.readString(body)));
        } else if (challengeNonce == null && type == Handshake.CHALLENGE) {
            onChallenge(ctx, body);
        } else if (challengeNonce != null && !proven && type == Handshake.PROOF) {
            onProof(ctx, body);
        } else if (proven && !welcomed && type == Handshake.WELCOME) {
            onWelcome(ctx, body);
        } else if (welcomed && type == Handshake.TABLE && self.purpose() == Handshake.PURPOSE_REGISTER) {
            List<Address> table = Handshake.readTable(body);
            if (table.size() != self.worldSize()) {
                fail(ctx, new Refused("rank 0 sent a table of " + table.size() + " ranks for a group of " + self.worldSize()));
                return;
            }
            handOver(ctx, table);
        } else {
            onGarbage(ctx, "a handshake record of type " + type + " out of turn");
        }
    }

    /** The acceptor speaks TLS: start it (the TLS handler goes before this one), or say why this rank cannot. */
    private void onTls(ChannelHandlerContext ctx, ByteBuf body) {
        if (body.readIntLE() != Handshake.MAGIC) {
            fail(ctx, new Refused("it is not a ringstar rank (its TLS record lacks the magic)"));
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

    private void onChallenge(ChannelHandlerContext ctx, ByteBuf body) {
        if (body.readIntLE() != Handshake.MAGIC) {
            fail(ctx, new Refused("it is not a ringstar rank (its challenge lacks the magic)"));
            return;
        }
        short version = body.readShortLE();
        if (version != Handshake.VERSION) {
            fail(ctx, new Refused("it speaks protocol version " + version + ", this rank speaks " + Handshake.VERSION));
            return;
        }
        challengeNonce = new byte[Handshake.NONCE_BYTES];
        body.readBytes(challengeNonce);
        helloNonce = HandshakeProofs.newNonce();
        ctx.writeAndFlush(Handshake.hello(ctx.alloc(), secret, challengeNonce, helloNonce));
    }

    private void onProof(ChannelHandlerContext ctx, ByteBuf body) {
        byte[] proof = new byte[Handshake.PROOF_BYTES];
        body.readBytes(proof);
        if (!HandshakeProofs.holds(proof, secret, Handshake.PROOF_LABEL, helloNonce, challengeNonce)) {
            // Nothing about this rank or its job has been said yet.
            fail(ctx, new Refused("it could not prove that it knows the shared secret"));
            return;
        }
        proven = true;
        ctx.writeAndFlush(Handshake.identity(ctx.alloc(), Handshake.IDENTIFY, secret, challengeNonce, helloNonce,
                self.aimedAt(peer)));
    }

    private void onWelcome(ChannelHandlerContext ctx, ByteBuf body) {
        Identity them = Handshake.readIdentity(body, Handshake.WELCOME, secret, helloNonce, challengeNonce);
        if (them == null) {
            fail(ctx, new Broken("its welcome's tag does not hold (altered on the way?)"));
            return;
        }
        if (!them.jobId().equals(self.jobId()) || them.worldSize() != self.worldSize() || them.rank() != peer
                || them.targetRank() != self.rank()) {
            fail(ctx, new Refused("it is rank " + them.rank() + " of job '" + them.jobId() + "' with world size "
                    + them.worldSize() + ", not rank " + peer + " of job '" + self.jobId() + "' with world size "
                    + self.worldSize()));
            return;
        }
        welcomed = true;
        if (self.purpose() == Handshake.PURPOSE_REGISTER) {
            // Rank 0 is now trusted: the table may be longer than an untrusted record.
            limitRecords(Handshake.MAX_RECORD);
        } else {
            handOver(ctx, List.of());
        }
    }

    private void handOver(ChannelHandlerContext ctx, List<Address> table) {
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
        fail(ctx, new Refused("it sent " + what));
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
