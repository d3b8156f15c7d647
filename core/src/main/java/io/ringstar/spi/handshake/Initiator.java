package io.ringstar.spi.handshake;

import io.ringstar.spi.HandshakeProofs;
import io.ringstar.spi.handshake.Step.Outcome;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * The connecting side of one connection's handshake, without I/O: it waits for the acceptor's
 * challenge, answers with this rank's proof, checks the acceptor's proof before saying anything
 * about the job, sends the identity, checks the acceptor's welcome (its tag, and that it is the
 * intended rank of this job and world size) and, for a registration, the table's tag and size.
 * Anything else the acceptor sends (a record out of turn, a malformed one, one without the magic)
 * is {@link Outcome#REFUSED}: what answers is no ringstar rank of this job, and retrying will not
 * change that. Not thread-safe: one connection, one thread (or event loop) at a time.
 */
public final class Initiator implements HandshakeSide {

    private enum State { AWAIT_CHALLENGE, AWAIT_PROOF, AWAIT_WELCOME, AWAIT_TABLE, OVER }

    private final byte[] secret;
    private final Identity self;
    private final int peerRank;
    private byte[] challengeNonce;
    private byte[] helloNonce;
    private Identity peer;
    private State state = State.AWAIT_CHALLENGE;

    /**
     * @param secret the job's shared secret, or null for none
     * @param self this rank's identity; {@link HandshakeRecords#PURPOSE_REGISTER} waits for the table
     * @param peerRank the rank this connection must reach
     */
    public Initiator(byte[] secret, Identity self, int peerRank) {
        this.secret = secret;
        this.self = self.aimedAt(peerRank);
        this.peerRank = peerRank;
    }

    /** The longest record to read from the acceptor now: longer once it proved itself and a table is due. */
    @Override
    public int recordLimit() {
        return state == State.AWAIT_TABLE ? HandshakeRecords.MAX_RECORD : HandshakeRecords.MAX_UNTRUSTED_RECORD;
    }

    /** True once the acceptor has proved the secret and welcomed this rank (a registration then awaits the table). */
    public boolean welcomed() {
        return state == State.AWAIT_TABLE || (state == State.OVER && peer != null);
    }

    /**
     * Takes one whole record from the acceptor. Never throws for what the acceptor sent.
     *
     * @param body the record after its type byte, little-endian; read by this call only
     */
    @Override
    public Step onRecord(byte type, ByteBuffer body) {
        HandshakeRecords.order(body);
        if (state == State.OVER) {
            return refuse("it sent a handshake record of type " + type + " after the handshake was over");
        }
        try {
            if (type == HandshakeRecords.REFUSE) {
                return refuse("refused: " + HandshakeRecords.readReason(body));
            }
            if (type == HandshakeRecords.ABANDON && state == State.AWAIT_TABLE) {
                state = State.OVER;
                return Step.of(Outcome.ABANDONED, HandshakeRecords.readReason(body));
            }
            if (state == State.AWAIT_CHALLENGE && type == HandshakeRecords.CHALLENGE) {
                return onChallenge(body);
            }
            if (state == State.AWAIT_PROOF && type == HandshakeRecords.PROOF) {
                return onProof(body);
            }
            if (state == State.AWAIT_WELCOME && type == HandshakeRecords.WELCOME) {
                return onWelcome(body);
            }
            if (state == State.AWAIT_TABLE && type == HandshakeRecords.TABLE) {
                return onTable(body);
            }
            return refuse("it sent a handshake record of type " + type + " out of turn");
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            return refuse("it sent a malformed handshake record ("
                    + (e.getMessage() == null ? "cut short" : e.getMessage()) + ")");
        }
    }

    /** What to do with bytes that are not a record at all (a length out of bounds): refuse. */
    @Override
    public Step onGarbage(String what) {
        return refuse("it sent " + what);
    }

    private Step onChallenge(ByteBuffer body) {
        if (body.getInt() != HandshakeRecords.MAGIC) {
            return refuse("it is not a ringstar rank (its challenge lacks the magic)");
        }
        short version = body.getShort();
        if (version != HandshakeRecords.VERSION) {
            return refuse("it speaks protocol version " + version + ", this rank speaks " + HandshakeRecords.VERSION);
        }
        challengeNonce = HandshakeRecords.bytes(body, HandshakeRecords.NONCE_BYTES);
        helloNonce = HandshakeProofs.newNonce();
        state = State.AWAIT_PROOF;
        return Step.proceed(HandshakeRecords.hello(secret, challengeNonce, helloNonce));
    }

    private Step onProof(ByteBuffer body) {
        byte[] proof = HandshakeRecords.bytes(body, HandshakeRecords.PROOF_BYTES);
        if (!HandshakeProofs.holds(proof, secret, HandshakeRecords.PROOF_LABEL, helloNonce, challengeNonce)) {
            // Nothing about this rank or its job has been said yet.
            return refuse("it could not prove that it knows the shared secret");
        }
        state = State.AWAIT_WELCOME;
        return Step.proceed(HandshakeRecords.identity(HandshakeRecords.IDENTIFY, secret, challengeNonce, helloNonce,
                self));
    }

    private Step onWelcome(ByteBuffer body) {
        Identity them = HandshakeRecords.readIdentity(body, HandshakeRecords.WELCOME, secret, helloNonce,
                challengeNonce);
        if (them == null) {
            state = State.OVER;
            return Step.of(Outcome.BROKEN, "its welcome's tag does not hold (altered on the way?)");
        }
        if (!them.jobId().equals(self.jobId()) || them.worldSize() != self.worldSize() || them.rank() != peerRank
                || them.targetRank() != self.rank()) {
            return refuse("it is rank " + them.rank() + " of job '" + them.jobId() + "' with world size "
                    + them.worldSize() + ", not rank " + peerRank + " of job '" + self.jobId() + "' with world size "
                    + self.worldSize());
        }
        peer = them;
        if (self.purpose() == HandshakeRecords.PURPOSE_REGISTER) {
            state = State.AWAIT_TABLE;
            return Step.proceed(null);
        }
        state = State.OVER;
        return new Step(Outcome.DONE, null, null, them, null);
    }

    private Step onTable(ByteBuffer body) {
        Table table = HandshakeRecords.readTable(body, secret, challengeNonce, helloNonce);
        if (table == null) {
            return refuse("its table's tag does not hold");
        }
        if (table.ranks().size() != self.worldSize()) {
            return refuse("rank 0 sent a table of " + table.ranks().size() + " ranks for a group of "
                    + self.worldSize());
        }
        for (int r = 0; r < table.ranks().size(); r++) {
            Identity entry = table.ranks().get(r);
            if (entry.rank() != r || !entry.jobId().equals(self.jobId()) || entry.worldSize() != self.worldSize()) {
                return refuse("rank 0's table holds " + entry + " where rank " + r + " of this job belongs");
            }
        }
        state = State.OVER;
        return new Step(Outcome.DONE, null, null, peer, table);
    }

    private Step refuse(String reason) {
        state = State.OVER;
        return Step.refused(null, reason);
    }
}
