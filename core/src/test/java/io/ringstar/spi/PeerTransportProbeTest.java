package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The skeleton's side of {@link TransportProbe}, over a transport whose channels only record what
 * they are asked to write: which failures are peer failures, which records are answered where and
 * when, and that a reply never lands inside another frame. The transports' own suites
 * ({@code TransportProbeConformanceTest}) show the same over real media.
 */
@Timeout(30)
class PeerTransportProbeTest {
    /** A transport with nothing to read; its waits block briefly, so a wait is a loop of rounds. */
    private static final class RecordingTransport extends PeerTransport {
        final RecordingChannel[] peers;

        RecordingTransport(int rank, int worldSize) {
            super("recording", rank, worldSize, Duration.ofSeconds(5));
            peers = new RecordingChannel[worldSize];
            for (int peer = 0; peer < worldSize; peer++) {
                if (peer != rank) {
                    peers[peer] = new RecordingChannel(this, peer);
                }
            }
            start(peers.clone(), WaitSchedule.choose(WAIT_SPIN_OFF, 1));
        }

        @Override
        protected int progress(long blockNanos) {
            if (blockNanos > 0) {
                LockSupport.parkNanos(Math.min(blockNanos, 200_000));
            }
            return 0;
        }

        @Override
        protected void wakeUp() {
        }

        @Override
        protected boolean readsInBackground() {
            return false;
        }

        @Override
        protected void release(boolean othersMayBeInside) {
        }
    }

    /** Records each frame's start and end, and runs {@link #duringData} in the middle of a DATA frame. */
    private static final class RecordingChannel extends PeerChannel {
        final List<String> log = new ArrayList<>();
        Runnable duringData = () -> { };

        RecordingChannel(PeerTransport transport, int peer) {
            super(transport, peer, 1024, 1 << 20);
        }

        @Override
        protected void writeFrame(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
            log.add("begin " + Frame.typeName(type) + " " + value);
            if (type == Frame.DATA) {
                duringData.run();
            }
            log.add("end " + Frame.typeName(type));
        }

        @Override
        protected void closeChannel() {
        }
    }

    /** Records the events a transport tells. */
    private static final class Events implements TransportProbe.PeerEvents {
        final List<String> heard = new ArrayList<>();

        @Override
        public synchronized void peerFailed(int peer, String reason) {
            heard.add("failed " + peer + ": " + reason);
        }

        @Override
        public synchronized void failureReported(int peer, int originRank) {
            heard.add("reported by " + peer + " on " + originRank);
        }
    }

    @Test
    void onlyAPeersFirstFailureIsToldAndNeitherAGoodbyeNorOurOwnClose() {
        RecordingTransport transport = new RecordingTransport(0, 4);
        Events events = new Events();
        transport.listen(events);
        transport.peers[1].fail("the connection to rank 1 was lost", null);
        transport.peers[1].fail("a second reason", null);
        transport.peers[2].onRecord(Frame.GOODBYE, 0);
        transport.peers[2].fail("rank 2 closed its transport", null);
        transport.peers[3].onRecord(Frame.FAILURE_REPORT, 1);
        assertEquals(List.of("failed 1: the connection to rank 1 was lost", "reported by 3 on 1"), events.heard);
        transport.close();
        transport.peers[3].fail("the transport closed under it", null);
        assertEquals(2, events.heard.size(), "after close: " + events.heard);
    }

    @Test
    void anUnknownRecordStillFailsThePeer() {
        RecordingTransport transport = new RecordingTransport(0, 2);
        Events events = new Events();
        transport.listen(events);
        transport.peers[1].onRecord(Frame.SHM_SWITCH + 1, 0);
        assertTrue(transport.peers[1].gone());
        assertEquals(List.of("failed 1: rank 1 sent an unknown record, type 11"), events.heard);
        transport.close();
    }

    @Test
    void aStatusReplyCountsFromWhenItArrived() {
        RecordingTransport transport = new RecordingTransport(0, 2);
        long askedAt = transport.askStatus();
        assertEquals(List.of("begin STATUS_QUERY 0", "end STATUS_QUERY"), transport.peers[1].log);
        assertEquals(TransportProbe.NO_ANSWER, transport.statusOf(1, askedAt));
        transport.peers[1].onRecord(Frame.STATUS_REPLY, 42);
        assertEquals(42, transport.statusOf(1, askedAt));
        assertEquals(TransportProbe.NO_ANSWER, transport.statusOf(1, transport.askStatus()), "not for a later query");
        transport.close();
        transport.askStatus();
        assertEquals(2, transport.peers[1].log.stream().filter(line -> line.startsWith("begin STATUS_QUERY")).count(),
                "no query after close: " + transport.peers[1].log);
    }

    @Test
    void aWaitingReceiveAnswersAQueryAndItsWatcherHearsOnlyOnceItBlocks() {
        RecordingTransport transport = new RecordingTransport(0, 3);
        transport.answerStatusWith(() -> 99);
        List<Long> watched = new ArrayList<>();
        long[] start = new long[1];
        transport.watchWaits(probe -> {
            watched.add(System.nanoTime() - start[0]);
            assertEquals(2, probe.waitingOn());
        });
        transport.peers[1].onRecord(Frame.STATUS_QUERY, 0);
        start[0] = System.nanoTime();
        assertThrows(CollectiveTimeoutException.class,
                () -> transport.receive(2, (piece, offset) -> { }, Deadline.after(Duration.ofMillis(60))));
        assertEquals(List.of("begin STATUS_REPLY 99", "end STATUS_REPLY"), transport.peers[1].log);
        assertTrue(!watched.isEmpty() && watched.get(0) >= WaitSchedule.YIELD_NANOS,
                "the watcher heard of the wait first after " + (watched.isEmpty() ? "never" : watched.get(0)) + " ns");
        assertEquals(-1, transport.waitingOn());
        long counted = transport.waitedNanos();
        assertTrue(counted >= TimeUnit.MILLISECONDS.toNanos(50) && counted < TimeUnit.SECONDS.toNanos(5),
                "counted " + counted + " ns");
        transport.close();
    }

    @Test
    void aReplyWaitsWhileItsChannelIsInTheMiddleOfAFrame() {
        RecordingTransport transport = new RecordingTransport(0, 3);
        transport.answerStatusWith(() -> 5);
        RecordingChannel one = transport.peers[1];
        RecordingChannel two = transport.peers[2];
        one.duringData = () -> {
            // Queries arrive while the message to rank 1 is half written, and the write waits a round.
            one.onRecord(Frame.STATUS_QUERY, 0);
            two.onRecord(Frame.STATUS_QUERY, 0);
            transport.awaitRound(System.nanoTime() - TimeUnit.SECONDS.toNanos(1), Deadline.after(Duration.ofSeconds(1)),
                    null, null);
        };
        transport.send(1, ByteBuffer.allocate(8));
        assertEquals(List.of("begin DATA 8", "end DATA"), one.log, "nothing inside the frame");
        assertEquals(List.of("begin STATUS_REPLY 5", "end STATUS_REPLY"), two.log, "answered from the write's wait");
        one.duringData = () -> { };
        assertThrows(CollectiveTimeoutException.class, () -> transport.barrier(Deadline.after(Duration.ofMillis(20))));
        assertEquals(List.of("begin DATA 8", "end DATA", "begin BARRIER 1", "end BARRIER", "begin STATUS_REPLY 5",
                "end STATUS_REPLY"), one.log, "answered at the next safe point, the barrier's wait");
        transport.close();
    }
}
