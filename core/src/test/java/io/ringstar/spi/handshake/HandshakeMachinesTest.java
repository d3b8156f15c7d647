package io.ringstar.spi.handshake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.spi.HandshakeProofs;
import io.ringstar.spi.handshake.Step.Outcome;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The acceptor and initiator state machines against each other and against forged records. */
class HandshakeMachinesTest {
    private static final byte[] SECRET = "s3cret".getBytes(StandardCharsets.UTF_8);

    private static Identity rank(int rank, byte purpose) {
        return new Identity(purpose, "job", 3, rank, -1, "127.0.0.1", 4000 + rank, new byte[] {(byte) rank});
    }

    /** One record as a state machine receives it: its type and body. */
    record Received(byte type, ByteBuffer body) {
        static Received of(ByteBuffer record) {
            ByteBuffer in = HandshakeRecords.order(record.duplicate());
            int length = HandshakeRecords.checkLength(in.getInt(), HandshakeRecords.MAX_RECORD);
            assertEquals(length, in.remaining(), "the length prefix covers the type and the body");
            byte type = in.get();
            return new Received(type, in.slice());
        }
    }

    /** Runs a whole exchange; returns the initiator's last step. */
    private static Step exchange(Acceptor acceptor, Initiator initiator, List<Step> acceptorSteps) {
        ByteBuffer toInitiator = acceptor.challenge();
        // A handshake is at most a few records each way: two machines that keep answering each
        // other are a bug, and must fail here rather than loop.
        for (int round = 0; round < 8; round++) {
            Received record = Received.of(toInitiator);
            Step initiated = initiator.onRecord(record.type(), record.body());
            if (initiated.over() || initiated.reply() == null) {
                return initiated;
            }
            Received answer = Received.of(initiated.reply());
            Step accepted = acceptor.onRecord(answer.type(), answer.body());
            acceptorSteps.add(accepted);
            if (accepted.reply() == null) {
                return initiated;
            }
            toInitiator = accepted.reply();
        }
        throw new AssertionError("the handshake did not end after 8 records each way");
    }

    @Test
    void aRegistrationFormsWithTheTableAndThePeersIdentity() {
        List<Identity> admitted = new ArrayList<>();
        Acceptor acceptor = new Acceptor(SECRET, rank(0, HandshakeRecords.PURPOSE_PEER), peer -> {
            admitted.add(peer);
            return null;
        });
        Initiator initiator = new Initiator(SECRET, rank(2, HandshakeRecords.PURPOSE_REGISTER), 0);
        List<Step> steps = new ArrayList<>();
        Step waiting = exchange(acceptor, initiator, steps);
        assertEquals(Outcome.CONTINUE, waiting.outcome(), "a registration waits for the table");
        assertTrue(initiator.welcomed());
        assertEquals(HandshakeRecords.MAX_RECORD, initiator.recordLimit());
        Step admittedStep = steps.get(steps.size() - 1);
        assertEquals(Outcome.ADMITTED, admittedStep.outcome());
        assertEquals(2, admittedStep.peer().rank());
        assertEquals(0, admittedStep.peer().targetRank());
        assertArrayEquals(new byte[] {2}, admittedStep.peer().details());
        assertEquals(List.of(admittedStep.peer()), admitted);

        Table table = new Table(42, List.of(rank(0, HandshakeRecords.PURPOSE_PEER),
                rank(1, HandshakeRecords.PURPOSE_REGISTER), rank(2, HandshakeRecords.PURPOSE_REGISTER)));
        Received record = Received.of(acceptor.table(table));
        assertEquals(HandshakeRecords.TABLE, record.type());
        Step done = initiator.onRecord(record.type(), record.body());
        assertEquals(Outcome.DONE, done.outcome(), done.reason());
        assertEquals(42, done.table().nonce());
        assertEquals(3, done.table().ranks().size());
        assertEquals("127.0.0.1:4001", done.table().ranks().get(1).address());
        assertArrayEquals(new byte[] {1}, done.table().ranks().get(1).details());
        assertEquals(0, done.peer().rank());
    }

    @Test
    void aPeerConnectionIsDoneAtTheWelcomeWithoutASecret() {
        Acceptor acceptor = new Acceptor(null, rank(1, HandshakeRecords.PURPOSE_PEER), peer -> null);
        Initiator initiator = new Initiator(null, rank(2, HandshakeRecords.PURPOSE_PEER), 1);
        Step done = exchange(acceptor, initiator, new ArrayList<>());
        assertEquals(Outcome.DONE, done.outcome(), done.reason());
        assertEquals(1, done.peer().rank());
        assertNull(done.table());
        assertEquals(2, acceptor.peer().rank());
    }

    @Test
    void theTransportsAdmissionRefusesADuplicateRank() {
        Acceptor acceptor = new Acceptor(SECRET, rank(0, HandshakeRecords.PURPOSE_PEER),
                peer -> "rank " + peer.rank() + " is already taken");
        Initiator initiator = new Initiator(SECRET, rank(1, HandshakeRecords.PURPOSE_REGISTER), 0);
        List<Step> steps = new ArrayList<>();
        Step refused = exchange(acceptor, initiator, steps);
        assertEquals(Outcome.REFUSED, steps.get(steps.size() - 1).outcome());
        assertEquals(Outcome.REFUSED, refused.outcome());
        assertEquals("refused: rank 1 is already taken", refused.reason());
    }

    private static Step refusalOf(Identity acceptorSelf, byte[] acceptorSecret, Identity initiatorSelf,
            byte[] initiatorSecret, int target) {
        Acceptor acceptor = new Acceptor(acceptorSecret, acceptorSelf, peer -> null);
        Initiator initiator = new Initiator(initiatorSecret, initiatorSelf, target);
        List<Step> steps = new ArrayList<>();
        Step last = exchange(acceptor, initiator, steps);
        assertEquals(Outcome.REFUSED, last.outcome(), "the initiator: " + last.reason());
        assertTrue(steps.get(steps.size() - 1).over(), "the acceptor ended it too");
        return last;
    }

    @Test
    void everyMismatchIsRefusedWithItsReason() {
        Identity zero = rank(0, HandshakeRecords.PURPOSE_PEER);
        Identity one = rank(1, HandshakeRecords.PURPOSE_REGISTER);
        assertTrue(refusalOf(zero, SECRET, new Identity(one.purpose(), "other", 3, 1, -1, "h", 1, null), SECRET, 0)
                .reason().contains("job 'other'"));
        assertTrue(refusalOf(zero, SECRET, new Identity(one.purpose(), "job", 4, 1, -1, "h", 1, null), SECRET, 0)
                .reason().contains("world size 4"));
        assertTrue(refusalOf(zero, SECRET, new Identity(one.purpose(), "job", 3, 3, -1, "h", 1, null), SECRET, 0)
                .reason().contains("claims rank 3"));
        assertTrue(refusalOf(zero, SECRET, new Identity(one.purpose(), "job", 3, 0, -1, "h", 1, null), SECRET, 0)
                .reason().contains("claims rank 0"));
        assertTrue(refusalOf(zero, SECRET, one, SECRET, 2).reason().contains("meant to reach rank 2"));
        assertTrue(refusalOf(zero, SECRET, one, null, 0).reason().contains("requires a shared secret"));
        assertTrue(refusalOf(zero, null, one, SECRET, 0).reason().contains("this job has none"));
        assertTrue(refusalOf(zero, SECRET, one, "guess".getBytes(StandardCharsets.UTF_8), 0).reason()
                .contains("authentication failed"));
    }

    @Test
    void anImpostorAcceptorIsRefusedBeforeTheInitiatorSaysAnythingAboutItsJob() {
        Initiator initiator = new Initiator(SECRET, rank(1, HandshakeRecords.PURPOSE_REGISTER), 0);
        Acceptor impostor = new Acceptor("guess".getBytes(StandardCharsets.UTF_8), rank(0, (byte) 2), peer -> null);
        Received challenge = Received.of(impostor.challenge());
        Step hello = initiator.onRecord(challenge.type(), challenge.body());
        assertEquals(HandshakeRecords.HELLO, Received.of(hello.reply()).type());
        // The impostor cannot check the hello's proof; it answers with a proof of its own guess.
        Received hellos = Received.of(hello.reply());
        ByteBuffer body = hellos.body();
        body.position(7);
        byte[] helloNonce = HandshakeRecords.bytes(body, HandshakeRecords.NONCE_BYTES);
        byte[] challengeNonce = HandshakeRecords.bytes(challenge.body().position(6), HandshakeRecords.NONCE_BYTES);
        Received proof = Received.of(HandshakeRecords.proof("guess".getBytes(StandardCharsets.UTF_8), challengeNonce,
                helloNonce));
        Step refused = initiator.onRecord(proof.type(), proof.body());
        assertEquals(Outcome.REFUSED, refused.outcome());
        assertNull(refused.reply(), "no identity follows");
        assertTrue(refused.reason().contains("could not prove"), refused.reason());
    }

    @Test
    void aWelcomeFromAnotherRankOrJobIsRefused() {
        Acceptor acceptor = new Acceptor(SECRET, new Identity((byte) 2, "job", 3, 2, -1, "h", 1, null), peer -> null);
        Initiator initiator = new Initiator(SECRET, rank(1, HandshakeRecords.PURPOSE_REGISTER), 0);
        // The acceptor is rank 2 and admits "rank 1 aimed at 0"? No: its own check refuses the target.
        Step refused = exchange(acceptor, initiator, new ArrayList<>());
        assertEquals(Outcome.REFUSED, refused.outcome());
        assertTrue(refused.reason().contains("meant to reach rank 0"), refused.reason());
    }

    @Test
    void recordsOutOfTurnTruncatedOrWithoutTheMagicAreRefusedOrDropped() {
        Acceptor acceptor = new Acceptor(SECRET, rank(0, (byte) 2), peer -> null);
        Step early = acceptor.onRecord(HandshakeRecords.IDENTIFY, ByteBuffer.allocate(10));
        assertEquals(Outcome.DROPPED, early.outcome());
        assertTrue(early.reason().contains("out of turn"), early.reason());

        Acceptor cut = new Acceptor(SECRET, rank(0, (byte) 2), peer -> null);
        Step truncated = cut.onRecord(HandshakeRecords.HELLO, HandshakeRecords.order(ByteBuffer.allocate(8))
                .putInt(0, HandshakeRecords.MAGIC).putShort(4, HandshakeRecords.VERSION));
        assertEquals(Outcome.DROPPED, truncated.outcome());
        assertTrue(truncated.reason().contains("malformed"), truncated.reason());

        Acceptor magic = new Acceptor(SECRET, rank(0, (byte) 2), peer -> null);
        Step stranger = magic.onRecord(HandshakeRecords.HELLO, ByteBuffer.wrap(new byte[80]));
        assertEquals(Outcome.DROPPED, stranger.outcome());
        assertTrue(stranger.reason().contains("lack the magic"), stranger.reason());

        Acceptor version = new Acceptor(SECRET, rank(0, (byte) 2), peer -> null);
        Step old = version.onRecord(HandshakeRecords.HELLO, HandshakeRecords.order(ByteBuffer.allocate(80))
                .putInt(0, HandshakeRecords.MAGIC).putShort(4, (short) 1));
        assertEquals(Outcome.REFUSED, old.outcome());
        assertEquals(HandshakeRecords.REFUSE, Received.of(old.reply()).type());
        assertTrue(old.reason().contains("protocol version 1"), old.reason());

        Initiator initiator = new Initiator(SECRET, rank(1, (byte) 1), 0);
        assertTrue(initiator.onRecord(HandshakeRecords.CHALLENGE, ByteBuffer.wrap(new byte[40])).reason()
                .contains("lacks the magic"));
        Initiator olderPeer = new Initiator(SECRET, rank(1, (byte) 1), 0);
        assertTrue(olderPeer.onRecord(HandshakeRecords.CHALLENGE, HandshakeRecords.order(ByteBuffer.allocate(40))
                .putInt(0, HandshakeRecords.MAGIC).putShort(4, (short) 2)).reason().contains("protocol version 2"));
        Initiator garbage = new Initiator(SECRET, rank(1, (byte) 1), 0);
        Step malformed = garbage.onRecord(HandshakeRecords.CHALLENGE, ByteBuffer.wrap(new byte[3]));
        assertEquals(Outcome.REFUSED, malformed.outcome());
        assertTrue(malformed.reason().contains("malformed"), malformed.reason());
        Initiator outOfTurn = new Initiator(SECRET, rank(1, (byte) 1), 0);
        assertTrue(outOfTurn.onRecord(HandshakeRecords.TABLE, ByteBuffer.allocate(0)).reason().contains("out of turn"));
        assertEquals(Outcome.REFUSED, new Initiator(SECRET, rank(1, (byte) 1), 0).onGarbage("x").outcome());
    }

    @Test
    void aTamperedTableOrIdentityDoesNotHold() {
        Acceptor acceptor = new Acceptor(SECRET, rank(0, (byte) 2), peer -> null);
        Initiator initiator = new Initiator(SECRET, rank(1, HandshakeRecords.PURPOSE_REGISTER), 0);
        exchange(acceptor, initiator, new ArrayList<>());
        ByteBuffer table = acceptor.table(new Table(7, List.of(rank(0, (byte) 2), rank(1, (byte) 1),
                rank(2, (byte) 1))));
        table.put(20, (byte) (table.get(20) ^ 1));
        Received record = Received.of(table);
        Step refused = initiator.onRecord(record.type(), record.body());
        assertEquals(Outcome.REFUSED, refused.outcome());
        assertTrue(refused.reason().contains("tag does not hold"), refused.reason());

        Acceptor other = new Acceptor(SECRET, rank(0, (byte) 2), peer -> null);
        Received challenge = Received.of(other.challenge());
        byte[] challengeNonce = HandshakeRecords.bytes(challenge.body().position(6), HandshakeRecords.NONCE_BYTES);
        byte[] helloNonce = HandshakeProofs.newNonce();
        Received hello = Received.of(HandshakeRecords.hello(SECRET, challengeNonce, helloNonce));
        assertEquals(Outcome.CONTINUE, other.onRecord(hello.type(), hello.body()).outcome());
        ByteBuffer identify = HandshakeRecords.identity(HandshakeRecords.IDENTIFY, SECRET, challengeNonce, helloNonce,
                rank(1, (byte) 1).aimedAt(0));
        identify.put(10, (byte) (identify.get(10) ^ 1));
        Received forged = Received.of(identify);
        Step dropped = other.onRecord(forged.type(), forged.body());
        assertEquals(Outcome.DROPPED, dropped.outcome());
        assertTrue(dropped.reason().contains("tag does not hold"), dropped.reason());
    }

    @Test
    void rankZeroAbandoningAWaitingRegistrationIsToldApart() {
        Acceptor acceptor = new Acceptor(null, rank(0, (byte) 2), peer -> null);
        Initiator initiator = new Initiator(null, rank(1, HandshakeRecords.PURPOSE_REGISTER), 0);
        exchange(acceptor, initiator, new ArrayList<>());
        Received abandon = Received.of(HandshakeRecords.abandon("ranks [2] did not register"));
        Step abandoned = initiator.onRecord(abandon.type(), abandon.body());
        assertEquals(Outcome.ABANDONED, abandoned.outcome());
        assertEquals("ranks [2] did not register", abandoned.reason());
        assertNotNull(abandoned.reason());
    }
}
