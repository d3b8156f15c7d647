package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.AsyncSettings;
import io.ringstar.CollectiveException;
import io.ringstar.ParameterSnapshot;
import io.ringstar.PeerFailureException;
import io.ringstar.ServerOptimizer;
import io.ringstar.SgdMomentum;
import io.ringstar.checkpoint.CheckpointDirectory;
import io.ringstar.testing.Ranks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Checkpoint and resume of the asynchronous parameter server with two servers: a run stopped by a
 * killed worker and resumed ends where an uninterrupted run ends, exactly, even when the servers'
 * newest checkpoints are of different moments (server 1's newest is deleted, so it resumes from an
 * older one than server 0). One worker: a gradient that depends on the parameters element by
 * element ({@code p - target}) with momentum. Two workers: fixed integer gradients with plain SGD,
 * whose sum does not depend on the order they arrive in. Either way a gradient applied twice or
 * not at all would change the result.
 */
class AsyncParameterServerCheckpointTest {
    private static final long[][] SHAPES = AsyncParameterServerTest.SHAPES;
    private static final int SERVERS = 2;
    private static final int STEPS = 10;
    private static final int STOP_AT = 6;

    private static ServerOptimizer optimizer(int workers) {
        return workers == 1 ? new SgdMomentum(0.25f, 0.5f) : SgdMomentum.plain(0.5f);
    }

    private static float[] gradient(int workers, int worker, long step, float[] parameters) {
        if (workers == 1) {
            return AsyncParameterServerTest.towardsTarget(parameters);
        }
        float[] values = new float[parameters.length];
        for (int i = 0; i < values.length; i++) {
            values[i] = AsyncParameterServerTest.fixedGradient(worker, step, i);
        }
        return values;
    }

    /** Trains up to {@code stopAt} steps (then stops without finishing, as a killed worker) or to the end. */
    private static List<Ranks.Outcome<float[]>> train(int workers, AsyncSettings settings, int stopAt,
            long[] startSteps) {
        return AsyncGroup.run(SERVERS + workers, SERVERS, settings, SHAPES, (ps, transport) -> {
            if (ps.isServer()) {
                assertEquals((long) workers * STEPS, ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES))
                        .version());
                return null;
            }
            int worker = transport.rank() - SERVERS;
            ParameterSnapshot current = ps.pull();
            startSteps[worker] = current.step();
            for (long t = current.step(); t < STEPS; t++) {
                if (worker == 0 && t == stopAt) {
                    return null;
                }
                float[] values = Tensors.flat(current.parameters());
                current = ps.push(Tensors.of(gradient(workers, worker, t, values), SHAPES));
            }
            return Tensors.flat(ps.finish().parameters());
        });
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {1, 2})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aResumedRunEndsWhereAnUninterruptedOneEnds(int workers, @TempDir Path directory) throws Exception {
        long[] startSteps = new long[workers];
        float[] uninterrupted = AsyncGroup.values(train(workers, AsyncSettings.builder(optimizer(workers))
                .maxStaleness(0).build(), STEPS, startSteps)).get(SERVERS);

        AsyncSettings checkpointed = AsyncSettings.builder(optimizer(workers)).maxStaleness(0)
                .checkpointDirectory(directory).checkpointEvery(2).resume(true).checkpointMetadata("test", "resume")
                .build();
        List<Ranks.Outcome<float[]>> stopped = train(workers, checkpointed, STOP_AT, startSteps);
        for (int server = 0; server < SERVERS; server++) {
            assertInstanceOf(PeerFailureException.class, stopped.get(server).error, "server " + server);
        }
        CheckpointDirectory server0 = new CheckpointDirectory(directory.resolve("server-0"));
        CheckpointDirectory server1 = new CheckpointDirectory(directory.resolve("server-1"));
        List<Long> kept = server1.steps();
        assertTrue(kept.size() >= 2, "server 1 kept " + kept);
        Files.delete(server1.pathOf(kept.get(0)));
        long newest0 = server0.steps().get(0);
        long newest1 = server1.steps().get(0);
        assertTrue(newest1 < newest0, "server 1 resumes at version " + newest1 + ", server 0 at " + newest0);

        List<float[]> resumed = AsyncGroup.values(train(workers, checkpointed, STEPS, startSteps));
        assertTrue(startSteps[0] > 0 && startSteps[0] < STOP_AT, "worker 0 restarted at step " + startSteps[0]);
        for (int rank = SERVERS; rank < SERVERS + workers; rank++) {
            assertArrayEquals(uninterrupted, resumed.get(rank), "rank " + rank);
        }
        if (workers == 2) {
            assertArrayEquals(AsyncParameterServerTest.afterFixedGradients(workers, STEPS, 0.5f), uninterrupted);
        }
    }

    /** A checkpoint of another run is refused by each server, and the workers hear it at once. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aCheckpointOfAnotherRunIsRefused(@TempDir Path directory) {
        AsyncSettings.Builder run = AsyncSettings.builder(SgdMomentum.plain(0.5f)).checkpointDirectory(directory)
                .resume(true);
        long[] startSteps = new long[2];
        AsyncGroup.values(train(2, run.checkpointMetadata("model", "a").build(), STEPS, startSteps));
        List<Ranks.Outcome<float[]>> other = train(2, run.checkpointMetadata("model", "b").build(), STEPS,
                startSteps);
        for (int server = 0; server < SERVERS; server++) {
            Throwable error = other.get(server).error;
            assertInstanceOf(IllegalArgumentException.class, error, "server " + server);
            assertTrue(error.getMessage().contains("it was saved with model a, this run has b"), error.getMessage());
        }
        for (int worker = SERVERS; worker < SERVERS + 2; worker++) {
            Ranks.Outcome<float[]> outcome = other.get(worker);
            assertInstanceOf(CollectiveException.class, outcome.error, "worker " + worker);
            assertTrue(outcome.error.getMessage().contains("could not start"), outcome.error.getMessage());
            assertTrue(outcome.elapsed.compareTo(AsyncGroup.TIMEOUT) < 0, "took " + outcome.elapsed);
        }
    }
}
