package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.AsyncSettings;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.ParameterSnapshot;
import io.ringstar.PeerFailureException;
import io.ringstar.SgdMomentum;
import io.ringstar.Transport;
import io.ringstar.internal.async.AsyncMessages;
import io.ringstar.testing.Ranks;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Failures of the asynchronous parameter server: a killed worker or server fails every other rank
 * within the timeout, naming it; ranks with other parameter counts, and gradients of other shapes,
 * are clear errors.
 */
class AsyncParameterServerFailureTest {
    private static final long[][] SHAPES = AsyncParameterServerTest.SHAPES;
    private static final AsyncSettings SETTINGS = AsyncSettings.builder(SgdMomentum.plain(0.5f)).build();

    /** Two servers, two workers; rank {@code victim} has its transport closed (as if its process died). */
    private static List<Ranks.Outcome<Void>> runAndKill(int victim) {
        List<Transport> transports = InProcessTransport.createGroup(4, AsyncGroup.TIMEOUT);
        return AsyncGroup.run(4, 2, SETTINGS, SHAPES, transports, (ps, transport) -> {
            if (ps.isServer()) {
                ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES));
                return null;
            }
            int worker = transport.rank() - 2;
            ps.pull();
            for (int t = 0; t < 100_000; t++) {
                if (transport.rank() == 2 && t == 5) {
                    transports.get(victim).close();
                    if (victim == 2) {
                        return null;
                    }
                }
                ps.push(AsyncParameterServerTest.fixedGradients(worker, t));
            }
            ps.finish();
            return null;
        });
    }

    private static void assertNames(Ranks.Outcome<Void> outcome, int victim) {
        assertInstanceOf(PeerFailureException.class, outcome.error, "rank " + outcome.rank + ": " + outcome.error);
        assertEquals(victim, ((CollectiveException) outcome.error).peerRank(), outcome.error.getMessage());
        assertTrue(outcome.elapsed.compareTo(AsyncGroup.TIMEOUT) < 0, "rank " + outcome.rank + " took "
                + outcome.elapsed);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aKilledWorkerFailsEveryServerAndTheOtherWorkerNamingIt() {
        List<Ranks.Outcome<Void>> outcomes = runAndKill(2);
        assertNames(outcomes.get(0), 2);
        assertNames(outcomes.get(1), 2);
        assertNames(outcomes.get(3), 2);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aKilledServerFailsEveryWorkerAndTheOtherServerNamingIt() {
        List<Ranks.Outcome<Void>> outcomes = runAndKill(1);
        assertNames(outcomes.get(0), 1);
        assertNames(outcomes.get(2), 1);
        assertNames(outcomes.get(3), 1);
    }

    /**
     * K = 0 and a worker that sends nothing for longer than the timeout: the server holds the other
     * worker's reply back for the timeout, then fails naming the slow one, and so does the other
     * worker. (The server's receive from the slow worker times out at about the same moment; either
     * way the failure is a timeout naming it.)
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aHoldBackLongerThanTheTimeoutFailsNamingTheSlowestWorker() {
        Duration timeout = Duration.ofSeconds(1);
        AsyncSettings lockStep = AsyncSettings.builder(SgdMomentum.plain(0.5f)).maxStaleness(0).build();
        List<Ranks.Outcome<Void>> outcomes = AsyncGroup.run(3, 1, lockStep, SHAPES,
                InProcessTransport.createGroup(3, timeout), timeout, (ps, transport) -> {
                    if (ps.isServer()) {
                        ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES));
                        return null;
                    }
                    ps.pull();
                    if (transport.rank() == 2) {
                        Thread.sleep(2500);
                    }
                    ps.push(AsyncParameterServerTest.fixedGradients(transport.rank() - 1, 0));
                    return null;
                });
        for (int rank : new int[] {0, 1}) {
            Throwable error = outcomes.get(rank).error;
            assertInstanceOf(CollectiveTimeoutException.class, error, "rank " + rank + ": " + error);
            assertEquals(2, ((CollectiveException) error).peerRank(), error.getMessage());
            assertTrue(error.getMessage().contains("worker rank 2"), error.getMessage());
        }
    }

    /** A worker whose model has another parameter count is refused by its first pull; the server hears why. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void ranksWithOtherParameterCountsAreAMismatch() {
        List<Transport> transports = InProcessTransport.createGroup(3, AsyncGroup.TIMEOUT);
        List<Ranks.Outcome<Void>> outcomes = Ranks.run(3, AsyncGroup.TIMEOUT.multipliedBy(4), rank -> {
            long[][] shapes = rank == 2 ? new long[][] {{2, 4}, {4}} : SHAPES;
            var config = io.ringstar.DistributedConfig.builder().worldSize(3).rank(rank)
                    .timeout(AsyncGroup.TIMEOUT).build();
            try (var ps = new io.ringstar.AsyncParameterServer(config, transports.get(rank), SETTINGS, shapes)) {
                if (ps.isServer()) {
                    ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES));
                } else {
                    ps.pull();
                    ps.finish();
                }
                return null;
            }
        });
        Throwable worker = outcomes.get(2).error;
        assertInstanceOf(CollectiveMismatchException.class, worker, String.valueOf(worker));
        assertTrue(worker.getMessage().contains("the peer has 10 parameter elements, this rank 12"),
                worker.getMessage());
        Throwable server = outcomes.get(0).error;
        assertInstanceOf(CollectiveMismatchException.class, server, String.valueOf(server));
        assertEquals(2, ((CollectiveException) server).peerRank());
        assertTrue(server.getMessage().contains("parameter elements"), server.getMessage());
        assertTrue(outcomes.get(0).elapsed.compareTo(AsyncGroup.TIMEOUT) < 0, "took " + outcomes.get(0).elapsed);
    }

    /** A gradient of another shape is refused before anything is sent; the training goes on. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aGradientOfAnotherShapeIsRefusedBeforeSending() {
        List<Ranks.Outcome<Void>> outcomes = AsyncGroup.run(2, 1, SETTINGS, SHAPES, (ps, transport) -> {
            if (ps.isServer()) {
                assertEquals(1, ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES)).version());
                return null;
            }
            ps.pull();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ps.push(Nd4j.zeros(org.nd4j.linalg.api.buffer.DataType.FLOAT, 3, 2), Nd4j.zeros(4)));
            assertTrue(e.getMessage().contains("gradient 0 is FLOAT [3, 2], its parameter FLOAT [2, 3]"),
                    e.getMessage());
            ParameterSnapshot after = ps.push(AsyncParameterServerTest.fixedGradients(0, 0));
            assertEquals(1, after.version());
            ps.finish();
            return null;
        });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    /**
     * A rank that is not a worker of this protocol: garbage, then (in a second group) a well-formed
     * message of a kind a server never takes. The server fails with a mismatch naming it; a worker
     * that gets garbage from a server fails naming that server.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void garbageOrAWrongKindIsAMismatchNamingTheSender() {
        ByteBuffer garbage = ByteBuffer.wrap(new byte[100]);
        ByteBuffer wrongKind = AsyncMessages.Header.of(AsyncMessages.PARAMS, 1, 0, 0, 10, 0, 0)
                .writeTo(AsyncMessages.allocate(AsyncMessages.HEADER_BYTES));
        for (ByteBuffer rogue : List.of(garbage, wrongKind)) {
            List<Transport> transports = InProcessTransport.createGroup(2, AsyncGroup.TIMEOUT);
            List<Ranks.Outcome<Void>> outcomes = Ranks.run(2, AsyncGroup.TIMEOUT.multipliedBy(4), rank -> {
                if (rank == 1) {
                    ByteBuffer start = AsyncMessages.receiveBuffer(10);
                    transports.get(1).recvAtMost(0, start, AsyncGroup.TIMEOUT);
                    transports.get(1).send(0, rogue.duplicate());
                    return null;
                }
                var config = io.ringstar.DistributedConfig.builder().worldSize(2).rank(0)
                        .timeout(AsyncGroup.TIMEOUT).build();
                try (var ps = new io.ringstar.AsyncParameterServer(config, transports.get(0), SETTINGS, SHAPES)) {
                    ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES));
                }
                return null;
            });
            Throwable server = outcomes.get(0).error;
            assertInstanceOf(CollectiveMismatchException.class, server, String.valueOf(server));
            assertEquals(1, ((CollectiveException) server).peerRank(), server.getMessage());
            assertTrue(server.getMessage().contains(rogue == garbage ? "magic 0x00000000" : "got PARAMS"),
                    server.getMessage());
            transports.get(1).close();
        }

        List<Transport> transports = InProcessTransport.createGroup(2, AsyncGroup.TIMEOUT);
        List<Ranks.Outcome<Void>> outcomes = Ranks.run(2, AsyncGroup.TIMEOUT.multipliedBy(4), rank -> {
            if (rank == 0) {
                transports.get(0).send(1, garbage.duplicate());
                return null;
            }
            var config = io.ringstar.DistributedConfig.builder().worldSize(2).rank(1).timeout(AsyncGroup.TIMEOUT)
                    .build();
            try (var ps = new io.ringstar.AsyncParameterServer(config, transports.get(1), SETTINGS, SHAPES)) {
                ps.pull();
            }
            return null;
        });
        Throwable worker = outcomes.get(1).error;
        assertInstanceOf(CollectiveMismatchException.class, worker, String.valueOf(worker));
        assertEquals(0, ((CollectiveException) worker).peerRank(), worker.getMessage());
        transports.get(0).close();
    }
}
