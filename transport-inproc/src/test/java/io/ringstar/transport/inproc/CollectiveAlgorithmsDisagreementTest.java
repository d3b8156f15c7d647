package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.ReduceOp;
import io.ringstar.internal.algorithm.DirectReduce;
import io.ringstar.internal.algorithm.RecursiveDoubling;
import io.ringstar.internal.algorithm.RingAllGather;
import io.ringstar.internal.algorithm.RingBroadcast;
import io.ringstar.internal.algorithm.RingReduceScatter;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.testing.Ranks;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Ranks that disagree on what they call (the op, the root, the count, the collective, the sequence
 * number) all fail with a {@link CollectiveMismatchException}, and at once, not at their timeout:
 * every rank's first wait is answered, and every rank hears, through the headers it checks, from
 * every other. Includes the disagreements on the root that leave no rank, or two, taking itself
 * for the root.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CollectiveAlgorithmsDisagreementTest {
    /** Long enough that a rank that waits for its timeout is seen as one. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration WATCHDOG = Duration.ofSeconds(90);
    private static final ElementType FLOAT = ElementType.FLOAT;
    private static final int CHUNK = 3;

    /** A disagreement: what each rank of a group of {@code worldSize} calls. */
    record Scenario(String name, int worldSize, AlgorithmGroup.Body<Object> body) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Scenario> scenarios() {
        return Stream.of(
                new Scenario("all-reduce: rank 2 of 5 reduces with MAX, the others SUM", 5,
                        s -> allReduce(s, s.rank == 2 ? ReduceOp.MAX : ReduceOp.SUM, 10)),
                new Scenario("all-reduce: rank 5 of 6 (folded in) has 8 elements, the others 7", 6,
                        s -> allReduce(s, ReduceOp.SUM, s.rank == 5 ? 8 : 7)),
                new Scenario("rank 0 of 3 enters a barrier, the others an all-reduce", 3,
                        s -> s.rank == 0 ? barrier(s) : allReduce(s, ReduceOp.SUM, 0)),
                new Scenario("barrier: rank 3 of 5 skipped a collective", 5, s -> {
                    if (s.rank == 3) {
                        s.begin("skipped", null, MessageHeader.NO_ROOT, FLOAT, 0);
                    }
                    return barrier(s);
                }),
                new Scenario("all-gather: rank 1 of 4 has blocks of 10, the others 9", 4, s -> {
                    long block = s.rank == 1 ? 10 : 9;
                    RingAllGather.run(s.begin("allGather", null, MessageHeader.NO_ROOT, FLOAT, block),
                            Vectors.allocate(FLOAT, block * s.worldSize, 0), CHUNK);
                    return null;
                }),
                new Scenario("reduce-scatter: rank 3 of 4 reduces with PROD, the others SUM", 4, s -> {
                    ReduceOp op = s.rank == 3 ? ReduceOp.PROD : ReduceOp.SUM;
                    RingReduceScatter.run(s.begin("reduceScatter", op, MessageHeader.NO_ROOT, FLOAT, 40),
                            Vectors.values(FLOAT, s.rank, 0, 40), Vectors.allocate(FLOAT, 40, 0),
                            Vectors.allocate(FLOAT, 10, 0), CHUNK);
                    return null;
                }),
                new Scenario("broadcast: rank 0 of 3 takes rank 1 for the root, the others rank 0 (no rank is root)",
                        3, s -> broadcast(s, s.rank == 0 ? 1 : 0, 10)),
                new Scenario("broadcast: rank 2 of 4 takes itself for the root, the others rank 0", 4,
                        s -> broadcast(s, s.rank == 2 ? 2 : 0, 10)),
                new Scenario("broadcast: two ranks name each other as the root", 2, s -> broadcast(s, 1 - s.rank, 10)),
                new Scenario("broadcast: ranks of 3 name the next rank as the root", 3,
                        s -> broadcast(s, (s.rank + 1) % 3, 10)),
                new Scenario("broadcast: rank 3 of 4 has 11 elements, the others 10", 4,
                        s -> broadcast(s, 0, s.rank == 3 ? 11 : 10)),
                new Scenario("reduce: rank 0 of 3 takes rank 1 for the root, the others rank 0 (no rank is root)", 3,
                        s -> reduce(s, s.rank == 0 ? 1 : 0, ReduceOp.SUM)),
                new Scenario("reduce: rank 2 of 4 takes itself for the root, the others rank 0", 4,
                        s -> reduce(s, s.rank == 2 ? 2 : 0, ReduceOp.SUM)),
                new Scenario("reduce: ranks of 3 name the next rank as the root", 3,
                        s -> reduce(s, (s.rank + 1) % 3, ReduceOp.SUM)),
                new Scenario("reduce: rank 1 of 4 reduces with MIN, the others MAX", 4,
                        s -> reduce(s, 3, s.rank == 1 ? ReduceOp.MIN : ReduceOp.MAX)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyRankFailsWithAMismatchAtOnce(Scenario scenario) {
        List<Ranks.Outcome<Object>> outcomes = AlgorithmGroup.run(scenario.worldSize, false, CALL_TIMEOUT, WATCHDOG,
                scenario.body);
        for (Ranks.Outcome<Object> outcome : outcomes) {
            assertNotNull(outcome.error, "rank " + outcome.rank + " returned normally");
            assertInstanceOf(CollectiveMismatchException.class, outcome.error, "rank " + outcome.rank + " failed with "
                    + outcome.error);
            assertTrue(outcome.elapsed.compareTo(CALL_TIMEOUT.dividedBy(2)) < 0, "rank " + outcome.rank + " took "
                    + outcome.elapsed + " to fail");
        }
    }

    private static Object allReduce(AlgorithmGroup.Session s, ReduceOp op, long count) {
        ByteBuffer source = Vectors.values(FLOAT, s.rank, 0, count);
        RecursiveDoubling.run(s.begin("allReduce", op, MessageHeader.NO_ROOT, FLOAT, count), source,
                Vectors.allocate(FLOAT, count, 0), CHUNK);
        return null;
    }

    private static Object barrier(AlgorithmGroup.Session s) {
        RecursiveDoubling.barrier(s.begin("barrier", null, MessageHeader.NO_ROOT, FLOAT, 0));
        return null;
    }

    private static Object broadcast(AlgorithmGroup.Session s, int root, long count) {
        RingBroadcast.run(s.begin("broadcast", null, root, FLOAT, count), Vectors.values(FLOAT, s.rank, 0, count),
                Vectors.allocate(FLOAT, count, 0), CHUNK);
        return null;
    }

    private static Object reduce(AlgorithmGroup.Session s, int root, ReduceOp op) {
        DirectReduce.run(s.begin("reduce", op, root, FLOAT, 10), Vectors.values(FLOAT, s.rank, 0, 10),
                Vectors.allocate(FLOAT, 10, 0), CHUNK);
        return null;
    }
}
