package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstar.CollectiveHandle;
import io.ringstar.Communicator;
import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The non-blocking calls (handles complete in issue order, blocking and non-blocking calls mix
 * across ranks), the barrier, and the accuracy of HALF and BFLOAT16 against float64.
 */
public abstract class CommunicatorAsyncCases extends CommunicatorFailureRules {
    /** Collectives of several ops and types, issued in this order. */
    private static List<CollectiveCase> sequence(int worldSize) {
        return List.of(
                new CollectiveCase(CollectiveCase.Call.ALL_REDUCE_ASYNC, ReduceOp.SUM, 0, worldSize,
                        CollectiveCase.layouts(ElementType.FLOAT, 1009)),
                new CollectiveCase(CollectiveCase.Call.ALL_REDUCE_ASYNC, ReduceOp.MAX, 0, worldSize,
                        CollectiveCase.layouts(ElementType.HALF, 7)),
                new CollectiveCase(CollectiveCase.Call.BROADCAST_ASYNC, null, 0, worldSize,
                        CollectiveCase.layouts(ElementType.LONG, 100)),
                new CollectiveCase(CollectiveCase.Call.ALL_REDUCE_ASYNC, ReduceOp.PROD, 0, worldSize,
                        CollectiveCase.layouts(ElementType.INT, 7)),
                new CollectiveCase(CollectiveCase.Call.ALL_REDUCE_ASYNC, ReduceOp.AVG, 0, worldSize,
                        CollectiveCase.layouts(ElementType.DOUBLE, 30_011)),
                new CollectiveCase(CollectiveCase.Call.ALL_REDUCE_ASYNC, ReduceOp.MIN, 0, worldSize,
                        CollectiveCase.layouts(ElementType.BFLOAT16, 7)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"ring", "star", "doubling", "auto"})
    void handlesCompleteInIssueOrder(String algorithm) {
        int worldSize = 3;
        List<Ranks.Outcome<Object>> outcomes = groups().reused(worldSize, Map.of(Communicator.ALGORITHM_OPTION,
                algorithm), (rank, communicator) -> {
                    List<CollectiveCase> cases = sequence(worldSize);
                    List<RankTensors> tensors = new ArrayList<>();
                    CollectiveCase last = new CollectiveCase(CollectiveCase.Call.ALL_REDUCE, ReduceOp.SUM, 0,
                            worldSize, CollectiveCase.layouts(ElementType.FLOAT, 7));
                    List<Integer> completed = Collections.synchronizedList(new ArrayList<>());
                    try (RankTensors lastTensors = last.tensorsOf(rank)) {
                        List<CollectiveHandle> handles = new ArrayList<>();
                        for (int k = 0; k < cases.size(); k++) {
                            int index = k;
                            tensors.add(cases.get(k).tensorsOf(rank));
                            CollectiveHandle handle = cases.get(k).start(communicator, tensors.get(k).tensors);
                            handle.toCompletableFuture().whenComplete((unused, error) -> completed.add(index));
                            handles.add(handle);
                        }
                        // A blocking call runs behind them: when it returns, every one is done.
                        last.start(communicator, lastTensors.tensors);
                        for (int k = 0; k < handles.size(); k++) {
                            assertTrue(handles.get(k).isDone(), "handle " + k + " is done after a later blocking call");
                        }
                        assertEquals(IntStream.range(0, cases.size()).boxed().toList(), completed,
                                "the order in which the handles completed");
                        for (int k = 0; k < handles.size(); k++) {
                            handles.get(k).await();
                            assertNull(handles.get(k).toCompletableFuture().get(1, TimeUnit.SECONDS));
                            cases.get(k).checkInPlace(rank, tensors.get(k));
                        }
                        last.checkInPlace(rank, lastTensors);
                        return null;
                    } finally {
                        tensors.forEach(RankTensors::close);
                    }
                });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @Test
    void blockingAndNonBlockingCallsMixAcrossRanks() {
        // Rank 0 issues everything before it waits for anything; rank 1 only blocks; rank 2 waits
        // for each handle at once. The same collectives, in the same order, meet.
        int worldSize = 3;
        List<Ranks.Outcome<Object>> outcomes = groups().reused(worldSize, RING, (rank, communicator) -> {
            List<CollectiveCase> cases = sequence(worldSize);
            List<RankTensors> tensors = new ArrayList<>();
            try {
                List<CollectiveHandle> handles = new ArrayList<>();
                for (CollectiveCase test : cases) {
                    RankTensors mine = test.tensorsOf(rank);
                    tensors.add(mine);
                    if (rank == 1) {
                        CollectiveCase blocking = new CollectiveCase(test.call() == CollectiveCase.Call.BROADCAST_ASYNC
                                ? CollectiveCase.Call.BROADCAST : CollectiveCase.Call.ALL_REDUCE, test.op(),
                                test.root(), worldSize, test.specs());
                        assertNull(blocking.start(communicator, mine.tensors), "a blocking call has no handle");
                        continue;
                    }
                    CollectiveHandle handle = test.start(communicator, mine.tensors);
                    if (rank == 2) {
                        handle.await();
                    }
                    handles.add(handle);
                }
                handles.forEach(CollectiveHandle::await);
                for (int k = 0; k < cases.size(); k++) {
                    cases.get(k).checkInPlace(rank, tensors.get(k));
                }
                return null;
            } finally {
                tensors.forEach(RankTensors::close);
            }
        });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @Test
    void aBarrierReturnsOnlyOnceEveryRankHasCalledIt() {
        int worldSize = 3;
        long[] entered = new long[1];
        List<Ranks.Outcome<Long>> outcomes = groups().reused(worldSize, RING, (rank, communicator) -> {
            // Behind a non-blocking collective: the barrier waits for it, in its place.
            INDArray tensor = vector(ElementType.FLOAT, rank, 1000);
            try {
                CollectiveHandle handle = communicator.allReduceAsync(ReduceOp.SUM, tensor);
                if (rank == 2) {
                    Thread.sleep(300);
                    entered[0] = System.nanoTime();
                }
                communicator.barrier();
                long returned = System.nanoTime();
                assertTrue(handle.isDone(), "the all-reduce issued before the barrier is done");
                communicator.barrier();
                return returned;
            } finally {
                TensorMemory.close(tensor);
            }
        });
        for (Ranks.Outcome<Long> outcome : outcomes) {
            assertTrue(outcome.valueOrFail() >= entered[0], "rank " + outcome.rank + " left the barrier "
                    + (entered[0] - outcome.value) / 1000 + " us before rank 2 entered it");
        }
    }

    @TestFactory
    Stream<DynamicTest> halfAndBfloat16StayWithinTheirErrorBound() {
        List<DynamicTest> tests = new ArrayList<>();
        int[] sizes = sweep() == Sweep.FULL ? new int[] {2, 3, 5, 8} : new int[] {3, 5};
        for (int n : sizes) {
            for (ElementType type : new ElementType[] {ElementType.HALF, ElementType.BFLOAT16}) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG}) {
                    for (String algorithm : CommunicatorConformanceTest.ALGORITHMS) {
                        tests.add(DynamicTest.dynamicTest(op + " " + type + " n=" + n + " " + algorithm,
                                () -> checkAccuracy(n, type, op, algorithm)));
                    }
                }
            }
        }
        return tests.stream();
    }

    /** Rank {@code rank}'s random values, rounded to {@code type} (the same arrays on every rank that asks). */
    private static INDArray randomInput(ElementType type, int rank, int count) {
        Random random = new Random(1_000_003L * rank + type.ordinal());
        double[] values = new double[count];
        for (int i = 0; i < count; i++) {
            // Mixed magnitudes and signs, so that sums cancel and round at every exponent.
            values[i] = (random.nextDouble() * 2 - 1) * Math.scalb(1.0, random.nextInt(9) - 4);
        }
        INDArray doubles = Nd4j.create(values, new long[] {count}, 'c');
        INDArray cast = doubles.castTo(type.dataType());
        TensorMemory.close(doubles);
        return cast;
    }

    private void checkAccuracy(int worldSize, ElementType type, ReduceOp op, String algorithm) {
        int count = 4099;
        // The documented bound: n · u · Σ|x_i| for a sum (u the unit roundoff), that over n for an average.
        double u = type == ElementType.HALF ? 0x1p-11 : 0x1p-8;
        List<Ranks.Outcome<double[]>> outcomes = groups().reused(worldSize, Map.of(Communicator.ALGORITHM_OPTION,
                algorithm, "chunkBytes", "256"), (rank, communicator) -> {
                    double[] exact = new double[count];
                    double[] magnitude = new double[count];
                    for (int r = 0; r < worldSize; r++) {
                        INDArray input = randomInput(type, r, count);
                        double[] x = CollectiveClosedForm.values(input);
                        TensorMemory.close(input);
                        for (int i = 0; i < count; i++) {
                            exact[i] += x[i];
                            magnitude[i] += Math.abs(x[i]);
                        }
                    }
                    INDArray mine = randomInput(type, rank, count);
                    try {
                        communicator.allReduce(op, mine);
                        double[] actual = CollectiveClosedForm.values(mine);
                        for (int i = 0; i < count; i++) {
                            double want = op == ReduceOp.AVG ? exact[i] / worldSize : exact[i];
                            double bound = worldSize * u * magnitude[i] / (op == ReduceOp.AVG ? worldSize : 1);
                            if (!(Math.abs(actual[i] - want) <= bound)) {
                                fail(op + " of " + type + " on rank " + rank + ": element " + i + " is " + actual[i]
                                        + ", float64 gives " + want + ", more than the bound " + bound + " apart");
                            }
                        }
                        return actual;
                    } finally {
                        TensorMemory.close(mine);
                    }
                });
        double[] first = outcomes.get(0).valueOrFail();
        for (Ranks.Outcome<double[]> outcome : outcomes) {
            CollectiveClosedForm.assertBitIdentical(first, outcome.valueOrFail(), op + " of " + type + " on rank "
                    + outcome.rank + " and rank 0");
        }
    }
}
