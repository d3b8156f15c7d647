package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.Communicator;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The ground of {@link CommunicatorConformanceTest}: the transport a subclass supplies, the sweep
 * it chooses, the groups every case runs over, and the mismatch rule for every call (the other
 * failure rules are in {@link CommunicatorFailureRules}). A subclass of the conformance test
 * overrides {@link #createGroup} and, for a network transport, {@link #sweep()}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class CommunicatorFailureCases {
    /** The timeout of a group whose case ends in a failure: long enough not to be the failure. */
    static final Duration FAILURE_TIMEOUT = Duration.ofSeconds(20);
    /** The options that force the ring all-reduce, which every world size runs today. */
    static final Map<String, String> RING = Map.of(Communicator.ALGORITHM_OPTION, Communicator.ALGORITHM_RING);

    private CommunicatorGroups groups;

    /** How much of the correctness sweep a subclass runs. */
    protected enum Sweep {
        /** World sizes 1 to 8, element counts 0 to 100 003 (and a million and three): for the in-process transport. */
        FULL,
        /**
         * For the network transports: world sizes 2, 3 and 5 and counts 0 to 100 003 on SUM and AVG of
         * FLOAT, every op and type on 3 ranks, every root; every failure case.
         */
        REDUCED
    }

    /** A group of {@code worldSize} connected transports, element {@code r} for rank {@code r}. */
    protected abstract List<Transport> createGroup(int worldSize, Duration timeout);

    /** The sweep this class runs; the full one unless a subclass says otherwise. */
    protected Sweep sweep() {
        return Sweep.FULL;
    }

    /** World sizes the correctness sweep covers, by {@link #sweep()}. */
    protected int[] worldSizes() {
        return sweep() == Sweep.FULL ? new int[] {1, 2, 3, 4, 5, 6, 7, 8} : new int[] {2, 3, 5};
    }

    /** Options every communicator of the suite gets before each case's own. */
    protected Map<String, String> suiteOptions() {
        return Map.of();
    }

    /** The groups of this class, made at first use (a subclass's options are known by then). */
    final CommunicatorGroups groups() {
        if (groups == null) {
            groups = new CommunicatorGroups(this::createGroup, suiteOptions());
        }
        return groups;
    }

    @AfterAll
    void closeGroups() {
        if (groups != null) {
            groups.close();
        }
    }

    /** Every rank's outcome is an exception of {@code type} that names the rank, thrown within {@code timeout}. */
    static <T> void assertAllFailWith(Class<? extends CollectiveException> type, List<Ranks.Outcome<T>> outcomes,
            Duration timeout, String what) {
        for (Ranks.Outcome<T> outcome : outcomes) {
            assertNotNull(outcome.error, what + ": rank " + outcome.rank + " should have failed but returned");
            CollectiveException e = assertInstanceOf(type, outcome.error,
                    what + ": rank " + outcome.rank + " failed with " + outcome.error);
            assertEquals(outcome.rank, e.rank(), e.getMessage());
            assertTrue(e.getMessage().contains(" on rank " + outcome.rank), e.getMessage());
            assertTrue(outcome.elapsed.compareTo(timeout) < 0, what + ": rank " + outcome.rank + " failed after "
                    + outcome.elapsed + ", against a timeout of " + timeout);
        }
    }

    /** One side of a mismatch: what a rank calls, with tensors it makes for {@code rank} and frees after. */
    @FunctionalInterface
    interface Side {
        void call(Communicator communicator, int rank);
    }

    /** A FLOAT vector of {@code count} SUM values for {@code rank}, of {@code type}. */
    static INDArray vector(ElementType type, int rank, long... shape) {
        return CollectiveClosedForm.filled(type, i -> CollectiveClosedForm.value(ReduceOp.SUM, type, 3, rank, 0, i),
                shape);
    }

    private static Side allReduce(ReduceOp op, ElementType type, long... shape) {
        return (communicator, rank) -> withTensor(vector(type, rank, shape), t -> communicator.allReduce(op, t));
    }

    private static Side allReduceAsync(ReduceOp op, ElementType type, long... shape) {
        return (communicator, rank) -> withTensor(vector(type, rank, shape),
                t -> communicator.allReduceAsync(op, t).await());
    }

    private static Side broadcast(int root, ElementType type, long... shape) {
        return (communicator, rank) -> withTensor(vector(type, rank, shape), t -> communicator.broadcast(root, t));
    }

    private static Side reduce(int root, ReduceOp op, ElementType type, long... shape) {
        return (communicator, rank) -> withTensor(vector(type, rank, shape), t -> communicator.reduce(root, op, t));
    }

    private static Side allGather(ElementType type, long... shape) {
        return (communicator, rank) -> withTensor(vector(type, rank, shape),
                t -> TensorMemory.close(communicator.allGather(t)));
    }

    private static Side reduceScatter(ReduceOp op, ElementType type, long... shape) {
        return (communicator, rank) -> withTensor(vector(type, rank, shape),
                t -> TensorMemory.close(communicator.reduceScatter(op, t)));
    }

    private static void withTensor(INDArray tensor, java.util.function.Consumer<INDArray> call) {
        try {
            call.accept(tensor);
        } finally {
            TensorMemory.close(tensor);
        }
    }

    /** A mismatch: rank {@code odd} calls {@code oddSide}, the others {@code side}. */
    private record Mismatch(String name, Side side, Side oddSide) {
    }

    private static List<Mismatch> mismatches() {
        ElementType f = ElementType.FLOAT;
        return List.of(
                new Mismatch("allReduce op", allReduce(ReduceOp.SUM, f, 10), allReduce(ReduceOp.MAX, f, 10)),
                new Mismatch("allReduce type", allReduce(ReduceOp.SUM, f, 10),
                        allReduce(ReduceOp.SUM, ElementType.DOUBLE, 10)),
                new Mismatch("allReduce shape", allReduce(ReduceOp.SUM, f, 2, 3), allReduce(ReduceOp.SUM, f, 3, 2)),
                new Mismatch("allReduceAsync op", allReduceAsync(ReduceOp.MIN, f, 10),
                        allReduceAsync(ReduceOp.PROD, f, 10)),
                new Mismatch("broadcast root", broadcast(0, f, 10), broadcast(1, f, 10)),
                new Mismatch("broadcast size", broadcast(0, ElementType.LONG, 1000),
                        broadcast(0, ElementType.LONG, 1003)),
                new Mismatch("reduce op", reduce(2, ReduceOp.SUM, f, 10), reduce(2, ReduceOp.MAX, f, 10)),
                new Mismatch("reduce root", reduce(0, ReduceOp.SUM, f, 10), reduce(2, ReduceOp.SUM, f, 10)),
                new Mismatch("allGather type", allGather(ElementType.HALF, 10), allGather(ElementType.BFLOAT16, 10)),
                new Mismatch("allGather shape", allGather(f, 6), allGather(f, 9)),
                new Mismatch("reduceScatter op", reduceScatter(ReduceOp.SUM, ElementType.INT, 6),
                        reduceScatter(ReduceOp.PROD, ElementType.INT, 6)),
                new Mismatch("reduceScatter size", reduceScatter(ReduceOp.SUM, f, 6),
                        reduceScatter(ReduceOp.SUM, f, 9)),
                new Mismatch("sequence allReduce/broadcast", allReduce(ReduceOp.SUM, f, 10), broadcast(0, f, 10)),
                new Mismatch("sequence allReduce/reduce", allReduce(ReduceOp.SUM, f, 10),
                        reduce(0, ReduceOp.SUM, f, 10)),
                new Mismatch("sequence allGather/reduceScatter", allGather(f, 3), reduceScatter(ReduceOp.SUM, f, 9)),
                new Mismatch("sequence broadcast/barrier", broadcast(0, f, 10),
                        (communicator, rank) -> communicator.barrier()));
    }

    @TestFactory
    Stream<DynamicTest> aMismatchFailsEveryRankWithinTheTimeout() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Mismatch mismatch : mismatches()) {
            // The odd rank in the middle, then first (the full sweep): the failure must reach ranks before
            // and after it.
            for (int odd : sweep() == Sweep.FULL ? new int[] {1, 0} : new int[] {1}) {
                tests.add(DynamicTest.dynamicTest(mismatch.name() + " on rank " + odd + " of 3", () -> {
                    List<Ranks.Outcome<Object>> outcomes = groups().own(3, FAILURE_TIMEOUT, RING,
                            (rank, communicator) -> {
                                (rank == odd ? mismatch.oddSide() : mismatch.side()).call(communicator, rank);
                                return null;
                            });
                    assertAllFailWith(CollectiveMismatchException.class, outcomes, FAILURE_TIMEOUT, mismatch.name());
                }));
            }
        }
        return tests.stream();
    }
}
