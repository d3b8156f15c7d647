package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link Transport} contract, written once. A transport's test module extends this class and
 * supplies {@link #createGroup}; every test here then runs over that transport.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class TransportConformanceTest {
    /** Watchdog for each multi-rank body. */
    protected static final Duration LIMIT = Duration.ofSeconds(30);
    /**
     * The timeout of the groups whose waits must run out. It bounds forming the group too, which on a
     * loaded 2-core machine can take more than half a second for three Aeron drivers; so not less.
     */
    private static final Duration SHORT_TIMEOUT = Duration.ofMillis(1500);
    /** The bound of each call of a multi-rank body that must fail, not hang, if a message goes astray. */
    private static final Duration CALL_WAIT = Duration.ofSeconds(10);

    private List<Transport> group = List.of();

    /**
     * Opens a group of {@code worldSize} connected transports, element {@code r} for rank {@code r},
     * each with {@code timeout} as its wait bound. The test closes them.
     */
    protected abstract List<Transport> createGroup(int worldSize, Duration timeout);

    /**
     * Whether the groups of this suite talk through shared memory (a network transport's ranks on
     * this host with option {@code sharedMemory} at its default): then a case checks that the bytes
     * went through the rings. Default: false.
     */
    protected boolean sharedMemoryExpected() {
        return false;
    }

    private List<Transport> group(int worldSize, Duration timeout) {
        group = createGroup(worldSize, timeout);
        assertEquals(worldSize, group.size());
        return group;
    }

    @Test
    void messagesBetweenPeersOnThisHostGoThroughSharedMemoryWhereExpected() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(sharedMemoryExpected(), "a suite without shared memory");
        List<Transport> ranks = group(3, LIMIT);
        SharedMemoryAssertions.assertAllPairsShareMemory(ranks);
        io.ringstar.spi.PeerTransport zero = (io.ringstar.spi.PeerTransport) ranks.get(0);
        io.ringstar.spi.PeerTransport one = (io.ringstar.spi.PeerTransport) ranks.get(1);
        long sentBefore = zero.sharedMemoryBytesSent();
        long receivedBefore = one.sharedMemoryBytesReceived();
        // Longer than one publication of the ring's writer, so the reader takes it in pieces.
        ByteBuffer message = pattern(0, 1, 0, 300_007);
        java.util.concurrent.atomic.AtomicReference<Throwable> sendFailure =
                new java.util.concurrent.atomic.AtomicReference<>();
        Thread sender = new Thread(() -> {
            try {
                zero.send(1, message.duplicate());
            } catch (Throwable e) {
                sendFailure.set(e);
            }
        });
        sender.start();
        ByteBuffer into = ByteBuffer.allocateDirect(message.capacity());
        one.recv(0, into);
        sender.join(LIMIT.toMillis());
        assertTrue(!sender.isAlive(), "rank 0's send returned");
        if (sendFailure.get() != null) {
            throw new AssertionError("rank 0's send failed", sendFailure.get());
        }
        assertArrayEquals(bytes(message), bytes(into.flip()));
        long frame = io.ringstar.spi.Frame.HEADER_BYTES + message.capacity();
        assertEquals(sentBefore + frame, zero.sharedMemoryBytesSent(), "bytes rank 0 wrote into rings");
        assertTrue(one.sharedMemoryBytesReceived() >= receivedBefore + frame, "bytes rank 1 took out of rings");
    }

    @AfterEach
    void closeGroup() {
        for (Transport transport : group) {
            transport.close();
        }
    }

    /** {@code length} bytes that differ by sender, receiver and position. */
    static ByteBuffer pattern(int from, int to, int sequence, int length) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(length);
        for (int i = 0; i < length; i++) {
            buffer.put(i, (byte) (from * 31 + to * 17 + sequence * 7 + i));
        }
        return buffer;
    }

    static byte[] bytes(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }

    @Test
    void ranksKnowTheirPlace() {
        List<Transport> transports = group(3, Duration.ofSeconds(10));
        for (int rank = 0; rank < 3; rank++) {
            assertEquals(rank, transports.get(rank).rank());
            assertEquals(3, transports.get(rank).worldSize());
        }
    }

    @Test
    void everyPairExchangesExactBytes() {
        List<Transport> transports = group(4, Duration.ofSeconds(20));
        Ranks.runAll(4, LIMIT, rank -> {
            Transport transport = transports.get(rank);
            for (int peer = 0; peer < 4; peer++) {
                if (peer != rank) {
                    transport.send(peer, pattern(rank, peer, 0, 1000 + peer));
                }
            }
            for (int peer = 0; peer < 4; peer++) {
                if (peer != rank) {
                    ByteBuffer into = ByteBuffer.allocate(1000 + rank);
                    transport.recv(peer, into);
                    assertEquals(into.capacity(), into.position(), "recv advances the position by the length");
                    assertArrayEquals(bytes(pattern(peer, rank, 0, 1000 + rank)), into.array(),
                            "bytes from rank " + peer + " to rank " + rank);
                }
            }
            return null;
        });
    }

    @Test
    void messagesFromOnePeerArriveInOrder() {
        List<Transport> transports = group(3, Duration.ofSeconds(20));
        int messages = 300;
        Ranks.runAll(3, LIMIT, rank -> {
            if (rank == 0) {
                for (int i = 0; i < messages; i++) {
                    transports.get(0).send(1, pattern(0, 1, i, 1 + (i * 37) % 5000));
                }
            } else if (rank == 1) {
                for (int i = 0; i < messages; i++) {
                    ByteBuffer into = ByteBuffer.allocate(1 + (i * 37) % 5000);
                    transports.get(1).recv(0, into);
                    assertArrayEquals(bytes(pattern(0, 1, i, into.capacity())), into.array(), "message " + i);
                }
            }
            return null;
        });
    }

    @Test
    void sendDoesNotWaitForTheReceiver() {
        List<Transport> transports = group(3, Duration.ofSeconds(20));
        CountDownLatch sent = new CountDownLatch(1);
        Ranks.runAll(3, LIMIT, rank -> {
            if (rank == 0) {
                for (int i = 0; i < 16; i++) {
                    transports.get(0).send(2, pattern(0, 2, i, 64 * 1024));
                }
                sent.countDown();
            } else if (rank == 2) {
                assertTrue(sent.await(20, TimeUnit.SECONDS), "16 sends of 64 KiB returned before any recv");
                for (int i = 0; i < 16; i++) {
                    ByteBuffer into = ByteBuffer.allocate(64 * 1024);
                    transports.get(2).recv(0, into);
                    assertArrayEquals(bytes(pattern(0, 2, i, 64 * 1024)), into.array());
                }
            }
            return null;
        });
    }

    @Test
    void callerMayReuseTheBufferAsSoonAsSendReturns() {
        List<Transport> transports = group(2, Duration.ofSeconds(10));
        ByteBuffer data = pattern(0, 1, 0, 4096);
        data.position(96).limit(4000);
        byte[] expected = bytes(data);
        transports.get(0).send(1, data);
        assertEquals(96, data.position(), "send leaves the position alone");
        assertEquals(4000, data.limit(), "send leaves the limit alone");
        ByteBuffer whole = data.duplicate().clear();
        for (int i = 0; i < whole.capacity(); i++) {
            whole.put(i, (byte) 0);
        }
        ByteBuffer into = ByteBuffer.allocate(expected.length);
        transports.get(1).recv(0, into);
        assertArrayEquals(expected, into.array());
    }

    @Test
    void headerAndPayloadGoAsOneMessage() {
        List<Transport> transports = group(2, Duration.ofSeconds(10));
        ByteBuffer header = pattern(0, 1, 1, 48);
        ByteBuffer payload = pattern(0, 1, 2, 777);
        transports.get(0).send(1, header, payload);
        ByteBuffer into = ByteBuffer.allocate(48 + 777);
        transports.get(1).recv(0, into);
        ByteBuffer expected = ByteBuffer.allocate(48 + 777).put(header.duplicate()).put(payload.duplicate());
        assertArrayEquals(expected.array(), into.array());
        assertEquals(0, header.position());
        assertEquals(0, payload.position());
    }

    @Test
    void emptyMessagesAreMessages() {
        List<Transport> transports = group(2, Duration.ofSeconds(10));
        transports.get(0).send(1, ByteBuffer.allocate(0));
        transports.get(0).send(1, pattern(0, 1, 0, 5));
        transports.get(1).recv(0, ByteBuffer.allocate(0));
        ByteBuffer into = ByteBuffer.allocate(5);
        transports.get(1).recv(0, into);
        assertArrayEquals(bytes(pattern(0, 1, 0, 5)), into.array());
    }

    @Test
    void largeMessagesArriveIntact() {
        List<Transport> transports = group(2, Duration.ofSeconds(20));
        int length = 8 << 20;
        Ranks.runAll(2, LIMIT, rank -> {
            if (rank == 0) {
                transports.get(0).send(1, pattern(0, 1, 3, length));
            } else {
                ByteBuffer into = ByteBuffer.allocateDirect(length);
                transports.get(1).recv(0, into);
                into.flip();
                assertEquals(pattern(0, 1, 3, length), into);
            }
            return null;
        });
    }

    @Test
    void aMessageOfAnotherLengthIsAMismatchAndStaysQueued() {
        List<Transport> transports = group(3, Duration.ofSeconds(10));
        transports.get(0).send(2, pattern(0, 2, 0, 16));
        ByteBuffer tooSmall = ByteBuffer.allocate(8);
        CollectiveMismatchException shorter = assertThrows(CollectiveMismatchException.class,
                () -> transports.get(2).recv(0, tooSmall));
        assertEquals(2, shorter.rank());
        assertEquals(0, shorter.peerRank());
        // Both lengths, as words: a bare "16" would also match a port number or a time.
        assertTrue(shorter.getMessage().contains("is 16 bytes") && shorter.getMessage().contains("exactly 8"),
                shorter.getMessage());
        assertEquals(0, tooSmall.position(), "nothing was written");
        ByteBuffer tooLarge = ByteBuffer.allocate(32);
        CollectiveMismatchException longer = assertThrows(CollectiveMismatchException.class,
                () -> transports.get(2).recv(0, tooLarge));
        assertEquals(0, longer.peerRank(), longer.getMessage());
        assertEquals(0, tooLarge.position(), "nothing was written");
        ByteBuffer exact = ByteBuffer.allocate(16);
        transports.get(2).recv(0, exact);
        assertArrayEquals(bytes(pattern(0, 2, 0, 16)), exact.array(), "the message was not lost");
    }

    @Test
    void recvAtMostTakesShorterMessagesAndRefusesLongerOnes() {
        List<Transport> transports = group(2, Duration.ofSeconds(10));
        transports.get(0).send(1, pattern(0, 1, 0, 10));
        transports.get(0).send(1, pattern(0, 1, 1, 100));
        ByteBuffer into = ByteBuffer.allocate(50);
        assertEquals(10, transports.get(1).recvAtMost(0, into, Duration.ofSeconds(5)));
        assertEquals(10, into.position());
        into.clear();
        assertThrows(CollectiveMismatchException.class,
                () -> transports.get(1).recvAtMost(0, into, Duration.ofSeconds(5)));
        ByteBuffer larger = ByteBuffer.allocate(100);
        assertEquals(100, transports.get(1).recvAtMost(0, larger, Duration.ofSeconds(5)));
        assertArrayEquals(bytes(pattern(0, 1, 1, 100)), larger.array());
    }

    @Test
    void recvFromASilentPeerTimesOut() {
        List<Transport> transports = group(3, SHORT_TIMEOUT);
        long start = System.nanoTime();
        CollectiveTimeoutException timeout = assertThrows(CollectiveTimeoutException.class,
                () -> transports.get(1).recv(2, ByteBuffer.allocate(4)));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(millis >= SHORT_TIMEOUT.toMillis() - 100 && millis < SHORT_TIMEOUT.toMillis() + 5000,
                "timed out after " + millis + " ms for a timeout of " + SHORT_TIMEOUT);
        assertEquals(1, timeout.rank());
        assertEquals(2, timeout.peerRank());
        start = System.nanoTime();
        assertThrows(CollectiveTimeoutException.class,
                () -> transports.get(1).recvAtMost(0, ByteBuffer.allocate(4), Duration.ofMillis(200)));
        millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(millis >= 150 && millis < 5000, "explicit 200 ms timeout took " + millis + " ms");
    }

    @Test
    void aClosedPeerIsAPeerFailureAfterItsLastMessages() {
        List<Transport> transports = group(3, Duration.ofSeconds(30));
        transports.get(2).send(0, pattern(2, 0, 0, 8));
        transports.get(2).close();
        ByteBuffer into = ByteBuffer.allocate(8);
        transports.get(0).recv(2, into);
        assertArrayEquals(bytes(pattern(2, 0, 0, 8)), into.array(), "what was sent before close arrives");
        long start = System.nanoTime();
        PeerFailureException gone = assertThrows(PeerFailureException.class,
                () -> transports.get(0).recv(2, ByteBuffer.allocate(8)));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "failed well before the 30 s timeout");
        assertEquals(2, gone.peerRank());
        assertThrows(PeerFailureException.class, () -> transports.get(1).send(2, pattern(1, 2, 0, 8)));
    }

    @Test
    void aPeerThatClosesWhileWeWaitFailsTheWait() {
        List<Transport> transports = group(3, Duration.ofSeconds(30));
        List<Ranks.Outcome<Object>> outcomes = Ranks.run(3, LIMIT, rank -> {
            if (rank == 1) {
                transports.get(1).recv(0, ByteBuffer.allocate(8));
            } else if (rank == 0) {
                Thread.sleep(200);
                transports.get(0).close();
            }
            return null;
        });
        PeerFailureException gone = assertInstanceOf(PeerFailureException.class, outcomes.get(1).error,
                "rank 1: " + outcomes.get(1).error);
        assertEquals(0, gone.peerRank(), gone.getMessage());
        assertTrue(outcomes.get(1).elapsed.compareTo(Duration.ofSeconds(10)) < 0, "took " + outcomes.get(1).elapsed);
    }

    @Test
    void barrierReleasesEveryRankTogether() {
        List<Transport> transports = group(4, Duration.ofSeconds(20));
        // In every round one rank (a different one each time) comes late: no rank may leave that
        // round's barrier before all four have arrived at it.
        AtomicIntegerArray arrived = new AtomicIntegerArray(5);
        Ranks.runAll(4, LIMIT, rank -> {
            for (int round = 0; round < 5; round++) {
                if (rank == round % 4) {
                    Thread.sleep(50);
                }
                arrived.incrementAndGet(round);
                transports.get(rank).barrier();
                assertEquals(4, arrived.get(round), "rank " + rank + " left barrier round " + round
                        + " before every rank arrived");
            }
            return null;
        });
    }

    @Test
    void barrierTimesOutNamingTheMissingRanks() {
        List<Transport> transports = group(3, SHORT_TIMEOUT);
        List<Ranks.Outcome<Object>> outcomes = Ranks.run(3, LIMIT, rank -> {
            if (rank != 2) {
                transports.get(rank).barrier();
            }
            return null;
        });
        for (int rank = 0; rank < 2; rank++) {
            CollectiveTimeoutException timeout = assertInstanceOf(CollectiveTimeoutException.class,
                    outcomes.get(rank).error, "rank " + rank + ": " + outcomes.get(rank).error);
            assertEquals(rank, timeout.rank(), timeout.getMessage());
            assertEquals(2, timeout.peerRank(), "the missing rank: " + timeout.getMessage());
            assertEquals("barrier", timeout.operation(), timeout.getMessage());
        }
    }

    @Test
    void badPeerRanksAreRefused() {
        List<Transport> transports = group(2, Duration.ofSeconds(10));
        assertThrows(IllegalArgumentException.class, () -> transports.get(0).send(0, ByteBuffer.allocate(1)));
        assertThrows(IllegalArgumentException.class, () -> transports.get(0).send(2, ByteBuffer.allocate(1)));
        assertThrows(IllegalArgumentException.class, () -> transports.get(0).recv(-1, ByteBuffer.allocate(1)));
    }

    @Test
    void closeIsIdempotentAndLaterCallsAreIllegal() {
        List<Transport> transports = group(2, Duration.ofSeconds(10));
        transports.get(0).close();
        transports.get(0).close();
        for (Runnable call : List.<Runnable>of(() -> transports.get(0).send(1, ByteBuffer.allocate(1)),
                () -> transports.get(0).recv(1, ByteBuffer.allocate(1)), () -> transports.get(0).barrier())) {
            IllegalStateException afterClose = assertThrows(IllegalStateException.class, call::run);
            assertTrue(afterClose.getMessage().contains("on rank 0: the transport is closed"), afterClose.getMessage());
        }
    }

    // ---- the view receive ----

    /** Records the pieces a view receive hands over, and keeps the views to check them afterwards. */
    static final class Pieces implements Transport.MessageHandler {
        final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        final List<ByteBuffer> views = new java.util.ArrayList<>();
        int length = -1;
        int nextOffset;
        boolean allReadOnly = true;

        @Override
        public void onStart(int messageLength) {
            length = messageLength;
        }

        @Override
        public void onBytes(ByteBuffer piece, int messageOffset) {
            assertEquals(nextOffset, messageOffset, "pieces come in order, each where the last ended");
            allReadOnly &= piece.isReadOnly();
            byte[] chunk = new byte[piece.remaining()];
            piece.duplicate().get(chunk);
            bytes.write(chunk, 0, chunk.length);
            nextOffset += chunk.length;
            views.add(piece);
        }
    }

    @Test
    void aViewReceiveHandsOverTheWholeMessageAsReadOnlyViewsThatReadEmptyAfterwards() {
        List<Transport> transports = group(2, Duration.ofSeconds(20));
        int length = (3 << 20) + 17;
        Ranks.runAll(2, LIMIT, rank -> {
            if (rank == 0) {
                transports.get(0).send(1, pattern(0, 1, 0, 40), pattern(0, 1, 1, length - 40));
            } else {
                Pieces pieces = new Pieces();
                assertEquals(length, transports.get(1).receive(0, pieces, Deadline.after(LIMIT)));
                assertEquals(length, pieces.length);
                ByteBuffer expected = ByteBuffer.allocate(length).put(pattern(0, 1, 0, 40))
                        .put(pattern(0, 1, 1, length - 40));
                assertArrayEquals(expected.array(), pieces.bytes.toByteArray());
                assertTrue(pieces.allReadOnly, "views of the transport's memory are read-only");
                for (ByteBuffer view : pieces.views) {
                    assertEquals(0, view.remaining(), "a view kept past its callback reads as empty");
                }
            }
            return null;
        });
    }

    @Test
    void aHandlerThatThrowsLosesOnlyItsOwnMessage() {
        List<Transport> transports = group(3, Duration.ofSeconds(20));
        int length = 2 << 20;
        transports.get(2).send(0, pattern(2, 0, 0, length));
        transports.get(2).send(0, pattern(2, 0, 1, 1000));
        IllegalArgumentException refused = new IllegalArgumentException("refused at the start");
        Transport.MessageHandler refusing = new Transport.MessageHandler() {
            @Override
            public void onStart(int messageLength) {
                throw refused;
            }

            @Override
            public void onBytes(ByteBuffer piece, int messageOffset) {
                throw new AssertionError("a handler that refused the message at its start got its bytes");
            }
        };
        IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class,
                () -> transports.get(0).receive(2, refusing, Deadline.after(LIMIT)));
        assertSame(refused, thrown);
        // Refused at its start, the message stays; thrown from inside, the rest of it is skipped.
        IllegalStateException midway = new IllegalStateException("thrown from a piece");
        int[] seen = new int[1];
        assertSame(midway, assertThrows(IllegalStateException.class, () -> transports.get(0).receive(2,
                (piece, offset) -> {
                    seen[0] += piece.remaining();
                    throw midway;
                }, Deadline.after(LIMIT))));
        assertTrue(seen[0] > 0 && seen[0] <= length, "the handler saw part of the message: " + seen[0]);
        ByteBuffer next = ByteBuffer.allocate(1000);
        transports.get(0).recv(2, next);
        assertArrayEquals(bytes(pattern(2, 0, 1, 1000)), next.array(), "the next message is intact");
    }

    // ---- a receive posted before a send ----

    @Test
    void sendAndReceiveAroundARingAndBetweenAPairMovesEveryByteWhileBothSidesSend() {
        // Messages far larger than a socket's buffers or an Aeron term: every send waits for its peer
        // to read while that peer waits on its own send, which only works if those waits keep reading.
        List<Transport> transports = group(3, Duration.ofSeconds(30));
        int length = 6 << 20;
        Ranks.runAll(3, LIMIT, rank -> {
            Transport transport = transports.get(rank);
            int next = (rank + 1) % 3;
            int prev = (rank + 2) % 3;
            for (int round = 0; round < 2; round++) {
                Pieces pieces = new Pieces();
                assertEquals(length + 16, transport.sendAndReceive(next, pattern(rank, next, round, 16),
                        pattern(rank, next, round + 10, length), prev, pieces, Deadline.after(LIMIT)));
                ByteBuffer expected = ByteBuffer.allocate(length + 16).put(pattern(prev, rank, round, 16))
                        .put(pattern(prev, rank, round + 10, length));
                assertArrayEquals(expected.array(), pieces.bytes.toByteArray(), "round " + round + " on rank " + rank);
            }
            if (rank < 2) {
                // A pair: the rank it sends to is the one it receives from.
                int peer = 1 - rank;
                Pieces pieces = new Pieces();
                assertEquals(2 * length, transport.sendAndReceive(peer, ByteBuffer.allocate(0),
                        pattern(rank, peer, 5, 2 * length), peer, pieces, Deadline.after(LIMIT)));
                assertArrayEquals(bytes(pattern(peer, rank, 5, 2 * length)), pieces.bytes.toByteArray());
            }
            return null;
        });
    }

    @Test
    void sendAndReceiveSendsFirstAndFailsAsTheReceiveWould() {
        List<Transport> transports = group(2, Duration.ofSeconds(20));
        transports.get(1).send(0, pattern(1, 0, 0, 100));
        transports.get(1).send(0, pattern(1, 0, 1, 2 << 20));
        transports.get(1).send(0, pattern(1, 0, 2, 300));
        IllegalArgumentException refused = new IllegalArgumentException("refused at the start");
        Transport.MessageHandler refusing = new Transport.MessageHandler() {
            @Override
            public void onStart(int messageLength) {
                throw refused;
            }

            @Override
            public void onBytes(ByteBuffer piece, int messageOffset) {
                throw new AssertionError("a handler that refused the message at its start got its bytes");
            }
        };
        assertSame(refused, assertThrows(IllegalArgumentException.class, () -> transports.get(0).sendAndReceive(1,
                pattern(0, 1, 0, 8), pattern(0, 1, 1, 1000), 1, refusing, Deadline.after(LIMIT))));
        ByteBuffer sent = ByteBuffer.allocate(1008);
        transports.get(1).recv(0, sent);
        assertArrayEquals(bytes(ByteBuffer.allocate(1008).put(pattern(0, 1, 0, 8)).put(pattern(0, 1, 1, 1000))
                .flip()), sent.array(), "the send went before the receive failed");
        ByteBuffer first = ByteBuffer.allocate(100);
        transports.get(0).recv(1, first);
        assertArrayEquals(bytes(pattern(1, 0, 0, 100)), first.array(), "refused at its start, the message stayed");
        // Thrown from inside a message: the rest of it is skipped, the next one is intact.
        IllegalStateException midway = new IllegalStateException("thrown from a piece");
        assertSame(midway, assertThrows(IllegalStateException.class, () -> transports.get(0).sendAndReceive(1,
                ByteBuffer.allocate(0), pattern(0, 1, 2, 10), 1, (piece, offset) -> {
                    throw midway;
                }, Deadline.after(LIMIT))));
        ByteBuffer next = ByteBuffer.allocate(300);
        transports.get(0).recv(1, next);
        assertArrayEquals(bytes(pattern(1, 0, 2, 300)), next.array(), "the next message is intact");
        ByteBuffer second = ByteBuffer.allocate(10);
        transports.get(1).recv(0, second);
        assertArrayEquals(bytes(pattern(0, 1, 2, 10)), second.array());
    }

    @Test
    void sendAndReceiveOnOneThreadLeavesTheCallsOfAnotherThreadOfTheRankAlone() {
        // Rank 0 runs two threads at once. One exchanges with rank 1 through sendAndReceive all along;
        // the other first receives from rank 2 a message sent only halfway through, then exchanges
        // with rank 2 through sendAndReceive calls of its own. Each thread drives the I/O while the
        // other waits for it, so a posting that belonged to the transport rather than to its thread
        // would be fed on the other thread, or overwritten by the other thread's posting.
        List<Transport> transports = group(3, Duration.ofSeconds(20));
        int rounds = 30;
        CountDownLatch halfway = new CountDownLatch(1);
        // Role 3 is rank 0's second thread. Each call waits less than the watchdog, so that a lost
        // message shows as the call that missed it rather than as a hang.
        Ranks.runAll(4, LIMIT, role -> {
            int rank = role % 3;
            Transport transport = transports.get(rank);
            if (role < 2) {
                for (int round = 0; round < rounds; round++) {
                    if (round == rounds / 2) {
                        halfway.countDown();
                    }
                    exchange(transport, 1 - rank, round, "role " + role);
                }
                return null;
            }
            int length = exchangedLength(2, 0, 0);
            if (role == 2) {
                assertTrue(halfway.await(CALL_WAIT.toMillis(), TimeUnit.MILLISECONDS), "halfway");
                transport.send(0, pattern(2, 0, 0, length));
            } else {
                PiecesOnOneThread pieces = new PiecesOnOneThread();
                assertEquals(length, transport.receive(2, pieces, Deadline.after(CALL_WAIT)));
                pieces.check(pattern(2, 0, 0, length), "role 3's receive");
            }
            for (int round = 1; round < rounds / 2; round++) {
                exchange(transport, 2 - rank, round, "role " + role);
            }
            return null;
        });
    }

    /** A sendAndReceive of round {@code round} with {@code peer}, which makes the matching one. */
    private static void exchange(Transport transport, int peer, int round, String who) {
        int rank = transport.rank();
        PiecesOnOneThread pieces = new PiecesOnOneThread();
        int length = exchangedLength(peer, rank, round);
        assertEquals(length, transport.sendAndReceive(peer, pattern(rank, peer, round, 8),
                pattern(rank, peer, round + 1, exchangedLength(rank, peer, round) - 8), peer, pieces,
                Deadline.after(CALL_WAIT)), who + ", round " + round);
        ByteBuffer expected = ByteBuffer.allocate(length).put(pattern(peer, rank, round, 8))
                .put(pattern(peer, rank, round + 1, length - 8)).flip();
        pieces.check(expected, who + ", round " + round);
    }

    /** Lengths from 8 to about 300 KB that differ by pair and round. */
    private static int exchangedLength(int from, int to, int round) {
        return 8 + (round * 7919 + from * 104_729 + to * 1301) % 300_000;
    }
    /** {@link Pieces} that notes a call on any thread but the one that made it. */
    private static final class PiecesOnOneThread implements Transport.MessageHandler {
        private final Thread receiver = Thread.currentThread();
        private final Pieces pieces = new Pieces();
        private volatile String strayThread;

        @Override
        public void onStart(int messageLength) {
            noteThread();
            pieces.onStart(messageLength);
        }

        @Override
        public void onBytes(ByteBuffer piece, int messageOffset) {
            noteThread();
            pieces.onBytes(piece, messageOffset);
        }

        private void noteThread() {
            if (Thread.currentThread() != receiver && strayThread == null) {
                strayThread = Thread.currentThread().getName();
            }
        }

        void check(ByteBuffer expected, String what) {
            assertNull(strayThread, what + ": the handler was called on another thread than the receiver's");
            assertArrayEquals(bytes(expected), pieces.bytes.toByteArray(), what);
        }
    }

    @Test
    void sendAndReceiveRefusesBadArgumentsWithoutTouchingAQueuedMessage() throws Exception {
        List<Transport> transports = group(2, Duration.ofSeconds(20));
        int length = 100_003;
        Ranks.runAll(2, LIMIT, rank -> {
            if (rank == 1) {
                transports.get(1).send(0, pattern(1, 0, 0, length));
                transports.get(1).send(0, pattern(1, 0, 1, 77));
            }
            // Rank 0's barrier returns once it has read rank 1's barrier, sent after both messages.
            transports.get(rank).barrier();
            return null;
        });
        Transport zero = transports.get(0);
        for (int dest : new int[] {-1, 0, 2}) {
            Pieces untouched = new Pieces();
            assertThrows(IllegalArgumentException.class, () -> zero.sendAndReceive(dest, ByteBuffer.allocate(0),
                    pattern(0, 1, 0, 10), 1, untouched, Deadline.after(LIMIT)), "to rank " + dest);
            assertEquals(-1, untouched.length, "the handler of a call to rank " + dest + " was handed a message");
        }
        // Longer than one message carries: a sparse file's gigabyte twice, never read.
        Path file = Files.createTempFile("ringstar-sparse", ".bin");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                StandardOpenOption.DELETE_ON_CLOSE)) {
            channel.write(ByteBuffer.allocate(1), (1L << 30) - 1);
            ByteBuffer gigabyte = channel.map(FileChannel.MapMode.READ_ONLY, 0, 1L << 30);
            Pieces untouched = new Pieces();
            assertThrows(IllegalArgumentException.class, () -> zero.sendAndReceive(1, gigabyte, gigabyte.duplicate(),
                    1, untouched, Deadline.after(LIMIT)));
            assertEquals(-1, untouched.length, "the handler of a call with an over-long message was handed one");
        }
        ByteBuffer first = ByteBuffer.allocate(length);
        zero.recv(1, first);
        assertArrayEquals(bytes(pattern(1, 0, 0, length)), first.array(), "the queued message, whole");
        ByteBuffer second = ByteBuffer.allocate(77);
        zero.recv(1, second);
        assertArrayEquals(bytes(pattern(1, 0, 1, 77)), second.array(), "the one after it");
    }

    @Test
    void firstInFirstOutHoldsAcrossBothKindsOfReceive() {
        List<Transport> transports = group(2, Duration.ofSeconds(20));
        int messages = 60;
        Ranks.runAll(2, LIMIT, rank -> {
            if (rank == 0) {
                for (int i = 0; i < messages; i++) {
                    transports.get(0).send(1, pattern(0, 1, i, 1 + (i * 7919) % 200_000));
                }
            } else {
                for (int i = 0; i < messages; i++) {
                    int length = 1 + (i * 7919) % 200_000;
                    if (i % 2 == 0) {
                        Pieces pieces = new Pieces();
                        assertEquals(length, transports.get(1).receive(0, pieces, Deadline.after(LIMIT)));
                        assertArrayEquals(bytes(pattern(0, 1, i, length)), pieces.bytes.toByteArray(), "message " + i);
                    } else {
                        ByteBuffer into = ByteBuffer.allocate(length);
                        transports.get(1).recv(0, into);
                        assertArrayEquals(bytes(pattern(0, 1, i, length)), into.array(), "message " + i);
                    }
                }
            }
            return null;
        });
    }

    // ---- progress ----

    @Test
    void aPeersSendsCompleteWhileThisRankIsInNoCall() {
        // More than the kernel's socket buffers and Aeron's terms take: only a rank that keeps
        // reading between calls lets these sends finish before it receives.
        List<Transport> transports = group(2, Duration.ofSeconds(30));
        int messages = 8;
        int length = 4 << 20;
        CountDownLatch sent = new CountDownLatch(1);
        Ranks.runAll(2, LIMIT, rank -> {
            if (rank == 0) {
                ByteBuffer message = pattern(0, 1, 5, length);
                for (int i = 0; i < messages; i++) {
                    message.putInt(0, i);
                    transports.get(0).send(1, message);
                }
                sent.countDown();
            } else {
                assertTrue(sent.await(20, TimeUnit.SECONDS), "the sends finished while rank 1 made no call");
                ByteBuffer into = ByteBuffer.allocateDirect(length);
                for (int i = 0; i < messages; i++) {
                    into.clear();
                    transports.get(1).recv(0, into);
                    assertEquals(i, into.getInt(0));
                    assertEquals(pattern(0, 1, 5, length).get(length - 1), into.get(length - 1));
                }
            }
            return null;
        });
    }

    @Test
    void oneRankReceivesFromSeveralPeersAtOnce() {
        List<Transport> transports = group(4, Duration.ofSeconds(30));
        int length = 3 << 20;
        Ranks.runAll(4, LIMIT, rank -> {
            if (rank != 0) {
                for (int i = 0; i < 3; i++) {
                    transports.get(rank).send(0, pattern(rank, 0, i, length + rank));
                }
            } else {
                // The reverse of the order they come in: the others wait queued meanwhile.
                for (int peer = 3; peer >= 1; peer--) {
                    for (int i = 0; i < 3; i++) {
                        ByteBuffer into = ByteBuffer.allocateDirect(length + peer);
                        transports.get(0).recv(peer, into);
                        into.flip();
                        assertEquals(pattern(peer, 0, i, length + peer), into, "message " + i + " of rank " + peer);
                    }
                }
            }
            return null;
        });
    }

    @Test
    void twoRanksThatSendEachOtherMoreThanTheReceiveBufferBeforeReceivingComplete() {
        // 96 MiB each way, more than the 64 MiB a rank buffers from a peer it does not send to,
        // less than the twice that it buffers from one it is sending to (the rule that keeps two
        // ranks that both send first from waiting on each other, with memory still bounded).
        List<Transport> transports = group(2, Duration.ofSeconds(60));
        int messages = 6;
        int length = 16 << 20;
        Ranks.runAll(2, LIMIT, rank -> {
            Transport transport = transports.get(rank);
            ByteBuffer message = ByteBuffer.allocateDirect(length);
            for (int m = 0; m < messages; m++) {
                message.putInt(0, rank * 100 + m).putInt(length - 4, m);
                transport.send(1 - rank, message);
            }
            ByteBuffer into = ByteBuffer.allocateDirect(length);
            for (int m = 0; m < messages; m++) {
                into.clear();
                transport.recv(1 - rank, into);
                assertEquals((1 - rank) * 100 + m, into.getInt(0));
                assertEquals(m, into.getInt(length - 4));
            }
            return null;
        });
    }
}
