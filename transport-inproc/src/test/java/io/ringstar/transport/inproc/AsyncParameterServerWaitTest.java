package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstar.AsyncParameterServer;
import io.ringstar.AsyncSettings;
import io.ringstar.ParameterSnapshot;
import io.ringstar.SgdMomentum;
import io.ringstar.testing.Ranks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A worker that finished waits for the others as long as they move: the server tells it so
 * (WAITING) whenever another worker pushes or pulls, however their messages fall against the
 * timeout. Also the PULL path: a pull after the first one asks every server for its range.
 * One server, two workers, a short timeout T; worker rank 1 finishes at once.
 */
class AsyncParameterServerWaitTest {
    private static final long[][] SHAPES = AsyncParameterServerTest.SHAPES;
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final float LR = 0.5f;

    /** The initial parameters after worker index 1's fixed gradients of steps {@code 0 … steps-1}. */
    private static float[] afterWorkerOne(int steps) {
        float[] values = AsyncParameterServerTest.initial();
        for (int i = 0; i < values.length; i++) {
            for (int t = 0; t < steps; t++) {
                values[i] -= LR * AsyncParameterServerTest.fixedGradient(1, t, i);
            }
        }
        return values;
    }

    /** What the second worker does between its first pull and its finish. */
    @FunctionalInterface
    private interface SecondWorker {
        void run(AsyncParameterServer ps) throws Exception;
    }

    /** The first worker finishes at once, the second runs {@code second}, then finishes; the final parameters. */
    private static List<float[]> run(int servers, SecondWorker second) {
        AsyncSettings settings = AsyncSettings.builder(SgdMomentum.plain(LR)).build();
        List<Ranks.Outcome<float[]>> outcomes = AsyncGroup.run(servers + 2, servers, settings, SHAPES,
                InProcessTransport.createGroup(servers + 2, TIMEOUT), TIMEOUT, (ps, transport) -> {
                    if (ps.isServer()) {
                        ps.serve(Tensors.of(AsyncParameterServerTest.initial(), SHAPES));
                        return null;
                    }
                    ps.pull();
                    if (transport.rank() == servers + 1) {
                        second.run(ps);
                    }
                    return Tensors.flat(ps.finish().parameters());
                });
        return AsyncGroup.values(outcomes);
    }

    /**
     * The other worker pushes every 0.85 T, so its first push lands between 0.75 T and T after the
     * FINISH. The server used to send WAITING only at quarter-timeout steps counted from the FINISH,
     * at about T, just when the finished worker gave up its wait for FINAL.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFinishedWorkerWaitsWhileAnotherPushesJustInsideTheTimeout() {
        int steps = 3;
        List<float[]> values = run(1, ps -> {
            for (int t = 0; t < steps; t++) {
                Thread.sleep(TIMEOUT.toMillis() * 85 / 100);
                ps.push(AsyncParameterServerTest.fixedGradients(1, t));
            }
        });
        assertArrayEquals(afterWorkerOne(steps), values.get(1), "the worker that finished first");
        assertArrayEquals(afterWorkerOne(steps), values.get(2), "the worker that pushed");
    }

    /**
     * Two servers. The other worker pushes once, then only pulls, every half timeout for 2.5 T:
     * each pull returns the parameters and version of the push's reply, and keeps the run alive
     * (a pull is progress: the finished worker is told WAITING, and no server times out).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void laterPullsAskEveryServerAndCountAsProgress() {
        List<float[]> values = run(2, ps -> {
            ParameterSnapshot pushed = ps.push(AsyncParameterServerTest.fixedGradients(1, 0));
            assertArrayEquals(afterWorkerOne(1), Tensors.flat(pushed.parameters()));
            for (int i = 0; i < 5; i++) {
                Thread.sleep(TIMEOUT.toMillis() / 2);
                ParameterSnapshot pulled = ps.pull();
                assertEquals(1, pulled.version(), "pull " + i);
                assertEquals(1, pulled.step(), "pull " + i);
                assertArrayEquals(afterWorkerOne(1), Tensors.flat(pulled.parameters()), "pull " + i);
            }
            ParameterSnapshot next = ps.push(AsyncParameterServerTest.fixedGradients(1, 1));
            assertEquals(2, next.version());
        });
        assertArrayEquals(afterWorkerOne(2), values.get(2), "the worker that finished first");
        assertArrayEquals(afterWorkerOne(2), values.get(3), "the worker that pulled");
    }
}
