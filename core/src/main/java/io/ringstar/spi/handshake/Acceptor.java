package io.ringstar.spi.handshake;

import io.ringstar.spi.HandshakeProofs;
import io.ringstar.spi.handshake.Step.Outcome;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * The listening side of one connection's handshake, without I/O: {@link #challenge()} gives the
 * first record to send, {@link #onRecord} takes each record the peer sends and says what to send
 * back and whether the handshake is over. It checks, in this order: the magic and version, that
 * both sides have a secret or neither, the peer's proof of the secret (before anything about the
 * job is said), the identity's tag, the job id, the world size, that the rank is another rank of
 * the group and that the peer meant to reach this one; then asks the transport's
 * {@link Admission} (a rank already taken, a purpose this rank does not serve). Not thread-safe:
 * one connection, one thread (or event loop) at a time.
 */
public final class Acceptor implements HandshakeSide {

    /** The transport's part of admitting a peer whose proof and identity hold. */
    @FunctionalInterface
    public interface Admission {
        /** Returns why the peer is refused, or null after reserving its rank for it. */
        String admit(Identity peer);
    }

    private enum State { AWAIT_HELLO, AWAIT_IDENTIFY, ADMITTED, OVER }

    private final byte[] secret;
    private final Identity self;
    private final Admission admission;
    private final byte[] challengeNonce = HandshakeProofs.newNonce();
    private byte[] helloNonce;
    private Identity peer;
    private State state = State.AWAIT_HELLO;

    /**
     * @param secret the job's shared secret, or null for none
     * @param self this rank's identity (its purpose and target are not read)
     */
    public Acceptor(byte[] secret, Identity self, Admission admission) {
        this.secret = secret;
        this.self = self;
        this.admission = admission;
    }

    /** The CHALLENGE record, the first thing sent on an accepted connection. */
    public ByteBuffer challenge() {
        return HandshakeRecords.challenge(challengeNonce);
    }

    /** The longest record to read from the peer now. */
    @Override
    public int recordLimit() {
        return HandshakeRecords.MAX_UNTRUSTED_RECORD;
    }

    /** The peer, once admitted; else null. */
    public Identity peer() {
        return peer;
    }

    /**
     * Takes one whole record from the peer. Never throws for what the peer sent: a malformed
     * record, one out of turn or one that lacks the magic is {@link Outcome#DROPPED}.
     *
     * @param body the record after its type byte, little-endian; read by this call only
     */
    @Override
    public Step onRecord(byte type, ByteBuffer body) {
        HandshakeRecords.order(body);
        try {
            if (state == State.AWAIT_HELLO && type == HandshakeRecords.HELLO) {
                return onHello(body);
            }
            if (state == State.AWAIT_IDENTIFY && type == HandshakeRecords.IDENTIFY) {
                return onIdentify(body);
            }
            return drop("a handshake record of type " + type + " out of turn");
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            String why = e.getMessage() == null ? "cut short" : e.getMessage();
            return drop("a malformed handshake record (" + why + ")");
        }
    }

    /** What to do with bytes that are not a record at all (a length out of bounds): drop the connection. */
    @Override
    public Step onGarbage(String what) {
        return drop(what);
    }

    private Step onHello(ByteBuffer body) {
        if (body.getInt() != HandshakeRecords.MAGIC) {
            return drop("bytes that lack the magic; it is not a ringstar rank");
        }
        short version = body.getShort();
        if (version != HandshakeRecords.VERSION) {
            return refuse("it speaks protocol version " + version + ", this rank speaks " + HandshakeRecords.VERSION);
        }
        boolean peerHasSecret = body.get() != 0;
        byte[] nonce = HandshakeRecords.bytes(body, HandshakeRecords.NONCE_BYTES);
        byte[] proof = HandshakeRecords.bytes(body, HandshakeRecords.PROOF_BYTES);
        if (secret != null && !peerHasSecret) {
            return refuse("this job requires a shared secret and the peer has none");
        }
        if (secret == null && peerHasSecret) {
            return refuse("the peer has a shared secret and this job has none");
        }
        if (!HandshakeProofs.holds(proof, secret, HandshakeRecords.HELLO_LABEL, challengeNonce, nonce)) {
            return refuse("authentication failed (wrong secret)");
        }
        helloNonce = nonce;
        state = State.AWAIT_IDENTIFY;
        return Step.proceed(HandshakeRecords.proof(secret, challengeNonce, helloNonce));
    }

    private Step onIdentify(ByteBuffer body) {
        Identity claimed = HandshakeRecords.readIdentity(body, HandshakeRecords.IDENTIFY, secret, challengeNonce,
                helloNonce);
        if (claimed == null) {
            return drop("an identity whose tag does not hold (altered on the way?)");
        }
        String refusal = check(claimed);
        if (refusal == null) {
            refusal = admission.admit(claimed);
        }
        if (refusal != null) {
            return refuse(refusal);
        }
        peer = claimed;
        state = State.ADMITTED;
        ByteBuffer welcome = HandshakeRecords.identity(HandshakeRecords.WELCOME, secret, helloNonce, challengeNonce,
                self.aimedAt(claimed.rank()));
        return new Step(Outcome.ADMITTED, welcome, null, claimed, null);
    }

    private String check(Identity claimed) {
        if (!claimed.jobId().equals(self.jobId())) {
            return "it belongs to job '" + claimed.jobId() + "', this rank to job '" + self.jobId() + "'";
        }
        if (claimed.worldSize() != self.worldSize()) {
            return "it has world size " + claimed.worldSize() + ", this job " + self.worldSize();
        }
        if (claimed.rank() < 0 || claimed.rank() >= self.worldSize() || claimed.rank() == self.rank()) {
            return "it claims rank " + claimed.rank() + ", which is not another rank of this group of "
                    + self.worldSize();
        }
        if (claimed.targetRank() != self.rank()) {
            return "it meant to reach rank " + claimed.targetRank() + ", and this is rank " + self.rank();
        }
        return null;
    }

    /**
     * The TABLE record for the admitted peer of a registration, tagged with this connection's nonces.
     *
     * @throws IllegalStateException if no peer was admitted
     */
    public ByteBuffer table(Table table) {
        if (state != State.ADMITTED) {
            throw new IllegalStateException("no peer was admitted on this connection");
        }
        return HandshakeRecords.table(secret, challengeNonce, helloNonce, table);
    }

    private Step refuse(String reason) {
        state = State.OVER;
        return Step.refused(HandshakeRecords.refuse(reason), reason);
    }

    private Step drop(String what) {
        state = State.OVER;
        return Step.of(Outcome.DROPPED, "it sent " + what);
    }
}
