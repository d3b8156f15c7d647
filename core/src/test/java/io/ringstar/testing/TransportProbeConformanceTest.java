package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.spi.TransportProbe;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link TransportProbe} contract, written once: the waits a transport counts and reports to
 * its watcher, the status exchange beside the messages, failure reports and peer events, the
 * barrier with a deadline. A transport's test module extends this class and supplies
 * {@link #createGroup}; every test here then runs over that transport. Each test is kept to about
 * a second beyond forming its group.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
public abstract class TransportProbeConformanceTest {
    /** Watchdog for each multi-rank body. */
    private static final Duration LIMIT = Duration.ofSeconds(20);
    /** The group's timeout: far beyond what any test here waits, so a wait that ends ended for its own reason. */
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** The longest a test waits for something the transport does in the background. */
    private static final long EVENT_WAIT_SECONDS = 10;

    private List<Transport> group = List.of();

    /**
     * Opens a group of {@code worldSize} connected transports, element {@code r} for rank {@code r},
     * each with {@code timeout} as its wait bound. The test closes them.
     */
    protected abstract List<Transport> createGroup(int worldSize, Duration timeout);

    private List<Transport> group(int worldSize) {
        group = createGroup(worldSize, TIMEOUT);
        assertEquals(worldSize, group.size());
        return group;
    }

    @AfterEach
    void closeGroup() {
        for (Transport transport : group) {
            transport.close();
        }
    }

    private static TransportProbe probe(List<Transport> transports, int rank) {
        return assertInstanceOf(TransportProbe.class, transports.get(rank), "rank " + rank + "'s transport");
    }

    /** A peer event, as a listener heard it. */
    private record Event(String kind, int peer, long detail) {
    }

    /** Records every peer event a rank's transport tells. */
    private static final class Events implements TransportProbe.PeerEvents {
        final Queue<Event> heard = new ConcurrentLinkedQueue<>();

        @Override
        public void peerFailed(int peer, String reason) {
            heard.add(new Event("peerFailed " + reason, peer, 0));
        }

        @Override
        public void failureReported(int peer, int originRank) {
            heard.add(new Event("failureReported", peer, originRank));
        }

        /** Waits until some event was heard, for at most the test's event wait; the first one heard, or null. */
        Event awaitFirst() throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(EVENT_WAIT_SECONDS);
            while (heard.isEmpty() && System.nanoTime() - end < 0) {
                Thread.sleep(5);
            }
            return heard.peek();
        }
    }

    @Test
    void aWaitingRankAsksFromItsWatcherAndHearsPeersInNoCallAnswer() {
        List<Transport> transports = group(3);
        TransportProbe zero = probe(transports, 0);
        probe(transports, 1).answerStatusWith(() -> 1001);
        probe(transports, 2).answerStatusWith(() -> 2002);
        long before = System.nanoTime();
        assertEquals(TransportProbe.NO_ANSWER, zero.statusOf(1, before), "no reply before any query");
        assertEquals(TransportProbe.NO_ANSWER, zero.statusOf(2, before), "no reply before any query");
        assertEquals(-1, zero.waitingOn(), "no receive waits");
        assertThrows(IllegalArgumentException.class, () -> zero.statusOf(0, before), "a rank is no peer of its own");

        AtomicBoolean asked = new AtomicBoolean();
        AtomicLong askedAt = new AtomicLong();
        AtomicLong fromOne = new AtomicLong(TransportProbe.NO_ANSWER);
        AtomicLong fromTwo = new AtomicLong(TransportProbe.NO_ANSWER);
        AtomicInteger waitedFor = new AtomicInteger(-2);
        AtomicReference<Thread> watcherThread = new AtomicReference<>();
        CountDownLatch heard = new CountDownLatch(1);
        zero.watchWaits(transport -> {
            assertSame(zero, transport);
            watcherThread.set(Thread.currentThread());
            waitedFor.set(transport.waitingOn());
            if (asked.compareAndSet(false, true)) {
                askedAt.set(transport.askStatus());
            }
            fromOne.set(transport.statusOf(1, askedAt.get()));
            fromTwo.set(transport.statusOf(2, askedAt.get()));
            if (fromOne.get() != TransportProbe.NO_ANSWER && fromTwo.get() != TransportProbe.NO_ANSWER) {
                heard.countDown();
            }
        });
        Ranks.runAll(3, LIMIT, rank -> {
            if (rank == 0) {
                ByteBuffer into = ByteBuffer.allocate(8);
                transports.get(0).recv(1, into);
                assertSame(Thread.currentThread(), watcherThread.get(), "the watcher runs on the waiting thread");
                assertEquals(-1, zero.waitingOn(), "the receive ended");
            } else if (rank == 1) {
                // Rank 1 sends no sooner than 300 ms from now, and not before rank 0 heard both answers
                // (so that the test waits for the answers, not for a guess at how long they take).
                Thread.sleep(300);
                assertTrue(heard.await(EVENT_WAIT_SECONDS, TimeUnit.SECONDS), "rank 0 heard both answers: rank 1 "
                        + fromOne.get() + ", rank 2 " + fromTwo.get());
                transports.get(1).send(0, ByteBuffer.allocate(8));
            }
            // Rank 2 makes no call: its transport answers by itself.
            return null;
        });
        assertEquals(1001, fromOne.get(), "rank 1's answer");
        assertEquals(2002, fromTwo.get(), "rank 2's answer");
        assertEquals(1, waitedFor.get(), "the watched receive waits for rank 1");
        assertEquals(TransportProbe.NO_ANSWER, zero.statusOf(1, System.nanoTime() + TimeUnit.SECONDS.toNanos(60)),
                "nothing came after a later query");
    }

    @Test
    void aPeerWaitingInAReceiveAnswersFromItsOwnWait() {
        List<Transport> transports = group(3);
        TransportProbe zero = probe(transports, 0);
        TransportProbe one = probe(transports, 1);
        one.answerStatusWith(() -> 77);
        CountDownLatch heard = new CountDownLatch(1);
        AtomicBoolean asked = new AtomicBoolean();
        AtomicLong askedAt = new AtomicLong();
        zero.watchWaits(transport -> {
            if (asked.compareAndSet(false, true)) {
                askedAt.set(transport.askStatus());
            }
            if (transport.statusOf(1, askedAt.get()) == 77
                    && transport.statusOf(2, askedAt.get()) != TransportProbe.NO_ANSWER) {
                heard.countDown();
            }
        });
        Ranks.runAll(3, LIMIT, rank -> {
            if (rank == 1) {
                transports.get(1).recv(2, ByteBuffer.allocate(4));
            } else if (rank == 0) {
                // Asked only once rank 1 waits: then only its waiting call can answer.
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(EVENT_WAIT_SECONDS);
                while (one.waitingOn() != 2 && System.nanoTime() - end < 0) {
                    Thread.sleep(1);
                }
                assertEquals(2, one.waitingOn(), "rank 1 waits for rank 2");
                transports.get(0).recv(2, ByteBuffer.allocate(4));
            } else {
                assertTrue(heard.await(EVENT_WAIT_SECONDS, TimeUnit.SECONDS), "rank 0 heard rank 1's answer");
                transports.get(2).send(0, ByteBuffer.allocate(4));
                transports.get(2).send(1, ByteBuffer.allocate(4));
            }
            return null;
        });
        assertEquals(TransportProbe.NO_STATUS, zero.statusOf(2, askedAt.get()), "rank 2 set no status");
    }

    @Test
    void aFailureReportReachesPeersInNoCall() throws InterruptedException {
        List<Transport> transports = group(3);
        Events one = new Events();
        Events two = new Events();
        probe(transports, 1).listen(one);
        probe(transports, 2).listen(two);
        probe(transports, 0).reportFailure(0);
        assertEquals(new Event("failureReported", 0, 0), one.awaitFirst(), "rank 1 heard: " + one.heard);
        assertEquals(new Event("failureReported", 0, 0), two.awaitFirst(), "rank 2 heard: " + two.heard);
        probe(transports, 2).reportFailure(1);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(EVENT_WAIT_SECONDS);
        while (one.heard.size() < 2 && System.nanoTime() - end < 0) {
            Thread.sleep(5);
        }
        assertEquals(List.of(new Event("failureReported", 0, 0), new Event("failureReported", 2, 1)),
                List.copyOf(one.heard));
        transports.get(0).close();
        probe(transports, 0).reportFailure(0);
    }

    @Test
    void aPeerThatSaysGoodbyeIsNoPeerFailure() throws InterruptedException {
        // Every transport here closes with a goodbye, so a closed peer is gone (its receives fail)
        // without having failed; a broken connection is a peer failure (the fault suites).
        List<Transport> transports = group(3);
        Events zero = new Events();
        Events one = new Events();
        probe(transports, 0).listen(zero);
        probe(transports, 1).listen(one);
        transports.get(2).close();
        PeerFailureException gone = assertThrows(PeerFailureException.class,
                () -> transports.get(0).recv(2, ByteBuffer.allocate(4)));
        assertEquals(2, gone.peerRank());
        assertThrows(PeerFailureException.class, () -> transports.get(1).send(2, ByteBuffer.allocate(4)));
        Thread.sleep(200);
        transports.get(0).close();
        Thread.sleep(200);
        transports.get(1).close();
        assertEquals(List.of(), List.copyOf(zero.heard), "rank 0 heard");
        assertEquals(List.of(), List.copyOf(one.heard), "rank 1 heard");
    }

    @Test
    void waitedNanosCountsAReceivesWaitAndNothingForOneThatDidNotWait() throws InterruptedException {
        List<Transport> transports = group(3);
        TransportProbe zero = probe(transports, 0);
        long before = zero.waitedNanos();
        long[] receiveNanos = new long[1];
        Ranks.runAll(3, LIMIT, rank -> {
            if (rank == 0) {
                long start = System.nanoTime();
                transports.get(0).recv(1, ByteBuffer.allocate(16));
                receiveNanos[0] = System.nanoTime() - start;
            } else if (rank == 1) {
                Thread.sleep(200);
                transports.get(1).send(0, ByteBuffer.allocate(16));
            }
            return null;
        });
        long grew = zero.waitedNanos() - before;
        assertTrue(grew >= TimeUnit.MILLISECONDS.toNanos(150) && grew <= receiveNanos[0],
                "a receive that took " + receiveNanos[0] / 1000 + " us, most of it waiting, counted " + grew / 1000
                        + " us");
        // A message already in the inbox (read there by the transport between calls, given time to)
        // is taken without a wait; tried a few times, for a loaded machine that was slow to read it.
        boolean notCounted = false;
        for (int attempt = 0; attempt < 5 && !notCounted; attempt++) {
            transports.get(1).send(0, ByteBuffer.allocate(16));
            Thread.sleep(100 + 100 * attempt);
            long was = zero.waitedNanos();
            transports.get(0).recv(1, ByteBuffer.allocate(16));
            notCounted = zero.waitedNanos() == was;
        }
        assertTrue(notCounted, "a receive that found its message counted a wait");
    }

    @Test
    void aBarrierWithADeadlineNamesEveryRankThatDidNotCome() {
        List<Transport> transports = group(4);
        Duration wait = Duration.ofMillis(700);
        long[] waitedBefore = {probe(transports, 0).waitedNanos(), probe(transports, 1).waitedNanos()};
        List<Ranks.Outcome<Object>> outcomes = Ranks.run(4, LIMIT, rank -> {
            if (rank < 2) {
                probe(transports, rank).barrier(Deadline.after(wait));
            }
            return null;
        });
        for (int rank = 0; rank < 2; rank++) {
            Ranks.Outcome<Object> outcome = outcomes.get(rank);
            CollectiveTimeoutException timeout = assertInstanceOf(CollectiveTimeoutException.class, outcome.error,
                    "rank " + rank + ": " + outcome.error);
            assertEquals("barrier", timeout.operation(), timeout.getMessage());
            assertEquals(rank, timeout.rank(), timeout.getMessage());
            assertEquals(2, timeout.peerRank(), timeout.getMessage());
            assertTrue(timeout.getMessage().contains("ranks [2, 3] did not reach the barrier within " + wait),
                    timeout.getMessage());
            assertTrue(outcome.elapsed.compareTo(wait.minusMillis(50)) >= 0
                    && outcome.elapsed.compareTo(TIMEOUT.dividedBy(2)) < 0,
                    "the deadline, not the transport's timeout, ended the wait: " + outcome.elapsed);
            long counted = probe(transports, rank).waitedNanos() - waitedBefore[rank];
            assertTrue(counted >= wait.toNanos() / 2 && counted <= outcome.elapsed.toNanos(),
                    "rank " + rank + "'s barrier waited " + outcome.elapsed + " and counted " + counted / 1000 + " us");
        }
    }
}
