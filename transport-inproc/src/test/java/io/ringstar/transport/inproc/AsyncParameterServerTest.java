package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.AsyncParameterServer;
import io.ringstar.AsyncSettings;
import io.ringstar.AsyncStatistics;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.ParameterServer;
import io.ringstar.ParameterSnapshot;
import io.ringstar.SgdMomentum;
import io.ringstar.Transport;
import io.ringstar.testing.Ranks;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The asynchronous parameter server's arithmetic and its staleness bound, with 1 and 2 servers and
 * 1 to 3 workers. The parameters are two tensors of 6 and 4 elements, so two servers' ranges
 * ({@code [0, 5)} and {@code [5, 10)}) cut through the first. Gradients are small integers and
 * learning rates powers of two, so every sum is exact in FLOAT and results compare exactly.
 */
class AsyncParameterServerTest {
    static final long[][] SHAPES = {{2, 3}, {4}};
    static final int ELEMENTS = 10;

    /** The initial parameters: element i is 10 i. */
    static float[] initial() {
        float[] values = new float[ELEMENTS];
        for (int i = 0; i < ELEMENTS; i++) {
            values[i] = 10 * i;
        }
        return values;
    }

    /** A gradient that depends only on the worker (index among the workers), its step and the element. */
    static float fixedGradient(int worker, long step, int element) {
        return worker + 1 + step % 3 + element;
    }

    /** The fixed gradients of one worker's step, as tensors of the parameters' shapes. */
    static INDArray[] fixedGradients(int worker, long step) {
        float[] values = new float[ELEMENTS];
        for (int i = 0; i < ELEMENTS; i++) {
            values[i] = fixedGradient(worker, step, i);
        }
        return Tensors.of(values, SHAPES);
    }

    /** Closed form after every worker applied {@code steps} fixed gradients with plain SGD of rate {@code lr}. */
    static float[] afterFixedGradients(int workers, int steps, float lr) {
        float[] values = initial();
        for (int i = 0; i < ELEMENTS; i++) {
            long sum = 0;
            for (int w = 0; w < workers; w++) {
                for (int t = 0; t < steps; t++) {
                    sum += (long) fixedGradient(w, t, i);
                }
            }
            values[i] -= lr * sum;
        }
        return values;
    }

    /**
     * K = 0, plain SGD, fixed gradients g(w, t): the servers apply each worker's gradient on its own,
     * so after T steps of W workers the parameters are {@code p0 - lr * sum over w, t of g(w, t)},
     * which is lock-step synchronous SGD with rate {@code lr * W} on the workers' average. Lock step
     * shows in the versions: the reply to step t holds every worker's step t (version at least
     * {@code W (t+1)}) and nothing beyond the next round (at most {@code W (t+1) + W - 1}).
     */
    @ParameterizedTest(name = "{0} servers, {1} workers")
    @CsvSource({"1, 2", "1, 3", "2, 2", "2, 3"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void lockStepAppliesEveryGradientOnceAndRepliesHoldTheWholeRound(int servers, int workers) {
        int steps = 12;
        float lr = 0.5f;
        AsyncSettings settings = AsyncSettings.builder(SgdMomentum.plain(lr)).maxStaleness(0).build();
        List<Ranks.Outcome<float[]>> outcomes = AsyncGroup.run(servers + workers, servers, settings, SHAPES,
                (ps, transport) -> {
                    if (ps.isServer()) {
                        AsyncStatistics counts = ps.serve(Tensors.of(initial(), SHAPES));
                        assertEquals((long) workers * steps, counts.version());
                        assertEquals(0, counts.maxLead());
                        return null;
                    }
                    int worker = transport.rank() - servers;
                    ParameterSnapshot current = ps.pull();
                    assertEquals(0, current.step());
                    assertArrayEquals(initial(), Tensors.flat(current.parameters()));
                    for (int t = 0; t < steps; t++) {
                        current = ps.push(fixedGradients(worker, t));
                        assertEquals(t + 1, current.step());
                        long version = current.version();
                        assertTrue(version >= (long) workers * (t + 1) && version <= (long) workers * (t + 2) - 1,
                                "version " + version + " answering step " + t);
                    }
                    return Tensors.flat(ps.finish().parameters());
                });
        List<float[]> values = AsyncGroup.values(outcomes);
        for (int rank = servers; rank < servers + workers; rank++) {
            assertArrayEquals(afterFixedGradients(workers, steps, lr), values.get(rank), "rank " + rank);
        }
    }

    /**
     * One worker and a gradient that depends on the parameters ({@code g = p - target}, target i
     * being {@code 3 i - 7}) with momentum: the run is sequential, so one server and two servers
     * end bit for bit where the same optimizer applied locally ends.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shardedEqualsUnshardedAndLocal() {
        SgdMomentum optimizer = new SgdMomentum(0.25f, 0.5f);
        int steps = 15;
        float[] local = initial();
        float[][] velocity = new float[1][ELEMENTS];
        for (int t = 0; t < steps; t++) {
            optimizer.apply(local, towardsTarget(local), velocity);
        }
        for (int servers = 1; servers <= 2; servers++) {
            AsyncSettings settings = AsyncSettings.builder(optimizer).build();
            List<Ranks.Outcome<float[]>> outcomes = AsyncGroup.run(servers + 1, servers, settings, SHAPES,
                    (ps, transport) -> {
                        if (ps.isServer()) {
                            assertEquals(steps, ps.serve(Tensors.of(initial(), SHAPES)).version());
                            return null;
                        }
                        ParameterSnapshot current = ps.pull();
                        for (int t = 0; t < steps; t++) {
                            current = ps.push(Tensors.of(towardsTarget(Tensors.flat(current.parameters())), SHAPES));
                        }
                        assertEquals(steps, current.version());
                        return Tensors.flat(ps.finish().parameters());
                    });
            assertArrayEquals(local, AsyncGroup.values(outcomes).get(servers), servers + " servers");
        }
    }

    /** {@code p - target}, element by element, target i being {@code 3 i - 7}. */
    static float[] towardsTarget(float[] parameters) {
        float[] gradient = new float[parameters.length];
        for (int i = 0; i < parameters.length; i++) {
            gradient[i] = parameters[i] - (3 * i - 7);
        }
        return gradient;
    }

    /**
     * Momentum's closed form: W workers all pushing the same constant gradient g, in whatever
     * order, make N = W T updates; with momentum 1/2 the k-th velocity is {@code g (2 - 2^(1-k))}
     * and with rate 1 the parameters end at {@code p0 - g (2N - 2 + 2^(1-N))}.
     */
    @ParameterizedTest(name = "{0} servers, {1} workers")
    @CsvSource({"1, 3", "2, 2"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void momentumMatchesItsClosedForm(int servers, int workers) {
        int steps = 4;
        int updates = workers * steps;
        float[] gradient = new float[ELEMENTS];
        float[] expected = initial();
        for (int i = 0; i < ELEMENTS; i++) {
            gradient[i] = i % 4 - 1;
            expected[i] -= gradient[i] * (2.0 * updates - 2 + Math.pow(2, 1 - updates));
        }
        AsyncSettings settings = AsyncSettings.builder(new SgdMomentum(1f, 0.5f)).maxStaleness(2).build();
        List<Ranks.Outcome<float[]>> outcomes = AsyncGroup.run(servers + workers, servers, settings, SHAPES,
                (ps, transport) -> {
                    if (ps.isServer()) {
                        ps.serve(Tensors.of(initial(), SHAPES));
                        return null;
                    }
                    ps.pull();
                    for (int t = 0; t < steps; t++) {
                        ps.push(Tensors.of(gradient, SHAPES));
                    }
                    return Tensors.flat(ps.finish().parameters());
                });
        List<float[]> values = AsyncGroup.values(outcomes);
        for (int rank = servers; rank < servers + workers; rank++) {
            assertArrayEquals(expected, values.get(rank), "rank " + rank);
        }
    }

    /**
     * The first worker sleeps every step. With K = 1 no worker starts step s before every other
     * has pushed step s - 2 (seen by the workers themselves), every server reports a lead of at
     * most 1, and the bound had to hold replies back; the versions the fast workers get prove it
     * too. Without a bound the same schedule runs far ahead, so the checks can fail.
     */
    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void theStalenessBoundHoldsAndIsWhatHoldsWorkersBack() {
        int servers = 2;
        int workers = 3;
        int steps = 30;
        for (int bound : new int[] {1, AsyncSettings.UNBOUNDED}) {
            AtomicIntegerArray started = new AtomicIntegerArray(workers);
            AtomicInteger largestLead = new AtomicInteger();
            AsyncSettings settings = AsyncSettings.builder(SgdMomentum.plain(0.5f)).maxStaleness(bound).build();
            List<Ranks.Outcome<AsyncStatistics>> outcomes = AsyncGroup.run(servers + workers, servers, settings,
                    SHAPES, (ps, transport) -> {
                        if (ps.isServer()) {
                            return ps.serve(Tensors.of(initial(), SHAPES));
                        }
                        int worker = transport.rank() - servers;
                        ps.pull();
                        for (int t = 0; t < steps; t++) {
                            started.set(worker, t);
                            for (int other = 0; other < workers; other++) {
                                largestLead.accumulateAndGet(t - started.get(other), Math::max);
                            }
                            if (worker == 0) {
                                Thread.sleep(10);
                            }
                            ParameterSnapshot reply = ps.push(fixedGradients(worker, t));
                            if (bound == 1) {
                                // Every unfinished worker has pushed step t - 1, this one step t.
                                assertTrue(reply.version() >= (t + 1) + (long) (workers - 1) * t,
                                        "version " + reply.version() + " answering step " + t);
                            }
                        }
                        ps.finish();
                        return ps.statistics();
                    });
            List<AsyncStatistics> values = AsyncGroup.values(outcomes);
            for (int rank = 0; rank < servers; rank++) {
                AsyncStatistics counts = values.get(rank);
                assertEquals((long) workers * steps, counts.version());
                if (bound == 1) {
                    assertTrue(counts.maxLead() <= 1, "server " + rank + ": lead " + counts.maxLead());
                    assertTrue(counts.heldBack() > 0, "server " + rank + " never held a reply back");
                    assertTrue(largestLead.get() <= 2, "a worker started step s before another pushed s - 2: lead "
                            + largestLead.get());
                } else {
                    assertTrue(counts.maxLead() > 5, "without a bound the lead is only " + counts.maxLead());
                    assertEquals(0, counts.heldBack());
                }
            }
        }
    }

    @Test
    void aGroupWithoutWorkersIsRefused() {
        List<Transport> transports = InProcessTransport.createGroup(1, AsyncGroup.TIMEOUT);
        try {
            DistributedConfig config = DistributedConfig.builder().worldSize(1).rank(0).build();
            InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> new AsyncParameterServer(
                    config, transports.get(0), AsyncSettings.builder(SgdMomentum.plain(1)).build(), SHAPES));
            assertTrue(e.getMessage().contains(ParameterServer.SERVERS_OPTION + " = 1")
                    && e.getMessage().contains("no worker"), e.getMessage());
        } finally {
            transports.forEach(Transport::close);
        }
    }
}
