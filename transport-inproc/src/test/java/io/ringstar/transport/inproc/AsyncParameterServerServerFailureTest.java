package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.AsyncSettings;
import io.ringstar.CollectiveException;
import io.ringstar.ServerOptimizer;
import io.ringstar.SgdMomentum;
import io.ringstar.internal.async.AsyncMessages;
import io.ringstar.testing.Ranks;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Failures of a server itself (its disk, its optimizer, the caller's parameters, a second call):
 * the workers hear at once that the server failed, and nobody blames a worker.
 */
class AsyncParameterServerServerFailureTest {
    private static final long[][] SHAPES = AsyncParameterServerTest.SHAPES;

    /** One server, two workers pushing until they fail (or 20 steps, then finishing). */
    private static List<Ranks.Outcome<Void>> train(AsyncSettings settings) {
        return AsyncGroup.run(3, 1, settings, SHAPES, (ps, transport) -> {
            if (ps.isServer()) {
                ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES));
                return null;
            }
            ps.pull();
            for (int t = 0; t < 20; t++) {
                ps.push(AsyncParameterServerTest.fixedGradients(transport.rank() - 1, t));
            }
            ps.finish();
            return null;
        });
    }

    /** The server fails on its own (naming no peer) with {@code detail}; each worker fails naming it, at once. */
    private static void assertTheServerIsBlamed(List<Ranks.Outcome<Void>> outcomes, String detail) {
        Throwable server = outcomes.get(0).error;
        assertInstanceOf(CollectiveException.class, server, String.valueOf(server));
        assertEquals(CollectiveException.NO_RANK, ((CollectiveException) server).peerRank(), server.getMessage());
        assertTrue(server.getMessage().contains("server rank 0 " + detail), server.getMessage());
        for (int rank = 1; rank < 3; rank++) {
            Throwable worker = outcomes.get(rank).error;
            assertInstanceOf(CollectiveException.class, worker, "rank " + rank + ": " + worker);
            assertEquals(0, ((CollectiveException) worker).peerRank(), "rank " + rank + ": " + worker.getMessage());
            assertTrue(worker.getMessage().contains("server rank 0 " + detail), worker.getMessage());
            assertTrue(outcomes.get(rank).elapsed.compareTo(AsyncGroup.TIMEOUT) < 0, "rank " + rank + " took "
                    + outcomes.get(rank).elapsed);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aCheckpointThatCannotBeWrittenIsTheServersFailure(@TempDir Path directory) throws Exception {
        Path file = Files.writeString(directory.resolve("not-a-directory"), "x");
        AsyncSettings settings = AsyncSettings.builder(SgdMomentum.plain(0.5f)).checkpointDirectory(file)
                .checkpointEvery(3).build();
        assertTheServerIsBlamed(train(settings), "could not checkpoint to " + file.resolve("server-0"));
    }

    /** Checkpointing only at the end: the workers are done; serve() says which server failed and where. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theFinalCheckpointFailingNamesTheServer(@TempDir Path directory) throws Exception {
        Path file = Files.writeString(directory.resolve("not-a-directory"), "x");
        List<Ranks.Outcome<Void>> outcomes = train(AsyncSettings.builder(SgdMomentum.plain(0.5f))
                .checkpointDirectory(file).build());
        Throwable server = outcomes.get(0).error;
        assertInstanceOf(CollectiveException.class, server, String.valueOf(server));
        assertEquals(0, ((CollectiveException) server).rank());
        assertTrue(server.getMessage().contains("server rank 0 could not checkpoint to " + file.resolve("server-0")),
                server.getMessage());
        outcomes.get(1).valueOrFail();
        outcomes.get(2).valueOrFail();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void anOptimizerThatThrowsIsTheServersFailure() {
        ServerOptimizer broken = new ServerOptimizer() {
            @Override
            public String describe() {
                return "broken";
            }

            @Override
            public int stateArrays() {
                return 0;
            }

            @Override
            public void apply(float[] parameters, float[] gradient, float[][] state) {
                throw new ArithmeticException("no update today");
            }
        };
        assertTheServerIsBlamed(train(AsyncSettings.builder(broken).build()), "failed applying step 0");
    }

    /** Initial parameters of the wrong shape: the server refuses them and tells the workers, who fail at once. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void initialParametersOfAnotherShapeAreToldToTheWorkers() {
        List<Ranks.Outcome<Void>> outcomes = AsyncGroup.run(3, 1, AsyncSettings.builder(SgdMomentum.plain(1))
                .build(), SHAPES, (ps, transport) -> {
                    if (ps.isServer()) {
                        ps.serve(Nd4j.zeros(DataType.FLOAT, 3, 2), Nd4j.zeros(DataType.FLOAT, 4));
                    } else {
                        ps.pull();
                    }
                    return null;
                });
        Throwable server = outcomes.get(0).error;
        assertInstanceOf(IllegalArgumentException.class, server, String.valueOf(server));
        assertTrue(server.getMessage().contains("parameter 0 has shape [3, 2]"), server.getMessage());
        for (int rank = 1; rank < 3; rank++) {
            Throwable worker = outcomes.get(rank).error;
            assertInstanceOf(CollectiveException.class, worker, "rank " + rank + ": " + worker);
            assertEquals(0, ((CollectiveException) worker).peerRank(), worker.getMessage());
            assertTrue(worker.getMessage().contains("could not start"), worker.getMessage());
            assertTrue(outcomes.get(rank).elapsed.compareTo(AsyncGroup.TIMEOUT) < 0, "rank " + rank + " took "
                    + outcomes.get(rank).elapsed);
        }
    }

    /** A second serve() is refused without sending the workers anything (they finished; nothing is for them). */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void servingTwiceIsRefusedWithoutTellingTheWorkers() {
        List<Ranks.Outcome<Void>> outcomes = AsyncGroup.run(2, 1, AsyncSettings.builder(SgdMomentum.plain(1))
                .build(), SHAPES, (ps, transport) -> {
                    if (ps.isServer()) {
                        ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES));
                        IllegalStateException twice = assertThrows(IllegalStateException.class,
                                () -> ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES)));
                        assertTrue(twice.getMessage().contains("serve called twice"), twice.getMessage());
                        return null;
                    }
                    ps.pull();
                    assertArrayEquals(AsyncParameterServerTest.initial(), Tensors.flat(ps.finish().parameters()));
                    ByteBuffer anything = AsyncMessages.receiveBuffer(AsyncParameterServerTest.ELEMENTS);
                    assertThrows(CollectiveException.class,
                            () -> transport.recvAtMost(0, anything, Duration.ofSeconds(2)),
                            "the server sent the finished worker something after FINAL");
                    return null;
                });
        AsyncGroup.values(outcomes);
    }
}
