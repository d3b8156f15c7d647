package io.ringstar.testing;

import static io.ringstar.testing.TensorFixtures.average;
import static io.ringstar.testing.TensorFixtures.callTensors;
import static io.ringstar.testing.TensorFixtures.copies;
import static io.ringstar.testing.TensorFixtures.filled;
import static io.ringstar.testing.TensorFixtures.value;
import static io.ringstar.testing.TensorFixtures.values;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstar.AllReduceAggregator;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.internal.tensor.TensorMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The {@link GradientAggregator} contract for both algorithms, written once over the transport
 * that a subclass supplies: closed-form results on every world size and awkward element counts,
 * several tensors of every shape per call, bit-identical results across ranks, untouched inputs,
 * and one test for each failure rule.
 *
 * <p>A subclass chooses the {@link Sweep}: the full one for the in-process transport, the reduced
 * one for a network transport, where every case costs real I/O. Cases that leave the group as they
 * found it (every call completes on every rank) share one formed group per world size across the
 * class, {@link ReusedGroup}; cases that fail a call, close a rank or change the transport's timeout
 * form their own.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AggregatorConformanceTest {
    /** Watchdog for each group of ranks. */
    protected static final Duration LIMIT = Duration.ofSeconds(60);
    /** The transports' timeout in a reused group, and the aggregators' in most cases. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    /** How much of the correctness sweep a subclass runs. */
    protected enum Sweep {
        /** World sizes 1 to 8, element counts from 0 to a million and three: for the in-process transport. */
        FULL,
        /**
         * World sizes 2 (the pair exchange), 3 and 5, element counts 0, 1, 7, 1009 (prime, not a multiple
         * of any of them) and 100 003 in 64 KiB chunks: every path of the algorithms at a fraction
         * of the bytes, for the network transports. Every failure case still runs in full.
         */
        REDUCED
    }

    private final ReusedGroup reused = new ReusedGroup(this::createGroup, CALL_TIMEOUT);

    /** The two topologies. */
    public enum Algorithm {
        STAR, RING;

        GradientAggregator create(DistributedConfig config, Transport transport) {
            return this == STAR ? new ParameterServer(config, transport) : new AllReduceAggregator(config, transport);
        }
    }

    /** A group of {@code worldSize} connected transports, element {@code r} for rank {@code r}. */
    protected abstract List<Transport> createGroup(int worldSize, Duration timeout);

    /** The sweep this class runs; the full one unless a subclass says otherwise. */
    protected Sweep sweep() {
        return Sweep.FULL;
    }

    /** World sizes the correctness sweep covers, by {@link #sweep()}; a subclass may narrow them further. */
    protected int[] worldSizes() {
        return sweep() == Sweep.FULL ? new int[] {1, 2, 3, 4, 5, 6, 7, 8} : new int[] {2, 3, 5};
    }

    /** Counts above this are "large": the sweep runs them on {@link #largeCountWorldSizes()} only. */
    private static final int LARGE_COUNT = 100_000;

    /**
     * The world sizes of the sweep's large count (its time is nearly all the sweep's): in the full
     * sweep 2 ranks (whose large count takes the reduce-scatter and all-gather of halves) and the
     * smallest ring of 3 (the small counts, which cross every chunk and window boundary with 16-byte
     * chunks, run on every size up to 8); in the reduced sweep every size.
     */
    protected int[] largeCountWorldSizes() {
        return sweep() == Sweep.FULL ? new int[] {2, 3} : worldSizes();
    }

    private static boolean contains(int[] values, int value) {
        for (int candidate : values) {
            if (candidate == value) {
                return true;
            }
        }
        return false;
    }

    /** Element counts the correctness sweep covers, by {@link #sweep()}. */
    protected int[] elementCounts() {
        return sweep() == Sweep.FULL ? new int[] {0, 1, 2, 7, 1000, 1_000_003} : new int[] {0, 1, 7, 1009, 100_003};
    }

    /**
     * The chunk size for a sweep case of {@code count} elements: tiny for small counts, so that every
     * run of a few elements crosses many chunks and the pipeline window; for the large count the
     * default 1 MiB in the full sweep, 64 KiB in the reduced one (several chunks per segment still).
     */
    private int sweepChunkBytes(int count) {
        if (count <= 1009) {
            return 16;
        }
        return sweep() == Sweep.FULL ? 1 << 20 : 1 << 16;
    }

    @AfterAll
    void closeReusedGroup() {
        reused.close();
    }

    /**
     * Options every aggregator of the suite gets before each test's own, so that a subclass can run
     * the whole contract with a setting on (the checksum, say).
     */
    protected Map<String, String> suiteOptions() {
        return Map.of();
    }

    private DistributedConfig.Builder configBuilder(int worldSize, int rank, Duration timeout) {
        DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                .timeout(timeout);
        suiteOptions().forEach(builder::option);
        return builder;
    }

    /**
     * Runs {@code body} on every rank with its own aggregator over a group of the class's
     * {@link ReusedGroup}: for cases in which every call completes on every rank. If any rank fails
     * (or the watchdog fires) the group is discarded, so that a bug shows in its own case only.
     */
    private <T> List<Ranks.Outcome<T>> withReusedGroup(Algorithm algorithm, int worldSize, Duration timeout,
            Map<String, String> options, AggregatorBody<T> body) {
        List<Transport> transports = reused.of(worldSize);
        List<GradientAggregator> aggregators = new ArrayList<>();
        boolean clean = false;
        try {
            for (int rank = 0; rank < worldSize; rank++) {
                DistributedConfig.Builder builder = configBuilder(worldSize, rank, timeout);
                options.forEach(builder::option);
                aggregators.add(algorithm.create(builder.build(), Transports.borrowed(transports.get(rank))));
            }
            List<Ranks.Outcome<T>> outcomes = Ranks.run(worldSize, LIMIT,
                    rank -> body.run(rank, aggregators.get(rank)));
            clean = outcomes.stream().allMatch(outcome -> outcome.error == null);
            return outcomes;
        } finally {
            aggregators.forEach(GradientAggregator::close);
            if (!clean) {
                reused.discard();
            }
        }
    }

    /** Like {@link #withReusedGroup} with a chunk size. */
    private <T> List<Ranks.Outcome<T>> withReusedGroup(Algorithm algorithm, int worldSize, int chunkBytes,
            AggregatorBody<T> body) {
        return withReusedGroup(algorithm, worldSize, CALL_TIMEOUT, Map.of("chunkBytes", Integer.toString(chunkBytes)),
                body);
    }

    /** Runs {@code body} on every rank with its own aggregator over a group of its own, closing them all at the end. */
    protected <T> List<Ranks.Outcome<T>> withAggregators(Algorithm algorithm, int worldSize, Duration timeout,
            int chunkBytes, AggregatorBody<T> body) {
        return withAggregators(algorithm, worldSize, timeout, Map.of("chunkBytes", Integer.toString(chunkBytes)), body);
    }

    /** Like the other, with any aggregator options. */
    protected <T> List<Ranks.Outcome<T>> withAggregators(Algorithm algorithm, int worldSize, Duration timeout,
            Map<String, String> options, AggregatorBody<T> body) {
        List<Transport> transports = createGroup(worldSize, timeout);
        List<GradientAggregator> aggregators = new ArrayList<>();
        try {
            for (int rank = 0; rank < worldSize; rank++) {
                DistributedConfig.Builder builder = configBuilder(worldSize, rank, timeout);
                options.forEach(builder::option);
                DistributedConfig config = builder.build();
                aggregators.add(algorithm.create(config, transports.get(rank)));
            }
            return Ranks.run(worldSize, LIMIT, rank -> body.run(rank, aggregators.get(rank)));
        } finally {
            transports.forEach(Transport::close);
            aggregators.forEach(GradientAggregator::close);
        }
    }

    /** What one rank does with its aggregator. */
    @FunctionalInterface
    protected interface AggregatorBody<T> {
        T run(int rank, GradientAggregator aggregator) throws Exception;
    }

    // ---------------------------------------------------------------- correctness

    @TestFactory
    Stream<DynamicTest> averagesAndBroadcastsAreExactOnEveryRank() {
        // World size outermost: the cases of one size share one group.
        List<DynamicTest> tests = new ArrayList<>();
        for (int worldSize : worldSizes()) {
            for (Algorithm algorithm : Algorithm.values()) {
                for (DataType type : new DataType[] {DataType.FLOAT, DataType.DOUBLE}) {
                    for (int count : elementCounts()) {
                        if (count > LARGE_COUNT && !contains(largeCountWorldSizes(), worldSize)) {
                            continue;
                        }
                        String name = algorithm + " n=" + worldSize + " " + type + " count=" + count;
                        tests.add(DynamicTest.dynamicTest(name, () -> checkExact(algorithm, worldSize, type, count)));
                    }
                }
            }
        }
        return tests.stream();
    }

    private void checkExact(Algorithm algorithm, int worldSize, DataType type, int count) {
        checkExact(algorithm, worldSize, type, count, Map.of("chunkBytes", Integer.toString(sweepChunkBytes(count))));
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void halfAndBfloat16GradientsAreAveragedWithinTheirBoundAndIdenticalOnEveryRank(Algorithm algorithm) {
        // Combined in float32 and rounded to the type once per value sent: the average of n values
        // is within u * sum |x_i| of the exact one (u = 2^-11 for HALF, 2^-8 for BFLOAT16), far
        // tighter than summing in the 16-bit type itself would be.
        int worldSize = 3;
        int count = 1009;
        List<Ranks.Outcome<double[][]>> outcomes = withReusedGroup(algorithm, worldSize, 64, (rank, aggregator) -> {
            INDArray[] grads = {halfPrecision(DataType.HALF, rank, count),
                    halfPrecision(DataType.BFLOAT16, rank, count)};
            INDArray[] averages = aggregator.reduceGradients(grads);
            double[][] result = {values(grads[0]), values(grads[1]), values(averages[0]), values(averages[1])};
            assertEquals(DataType.HALF, averages[0].dataType());
            assertEquals(DataType.BFLOAT16, averages[1].dataType());
            TensorMemory.close(averages);
            TensorMemory.close(grads);
            return result;
        });
        double[][] first = outcomes.get(0).valueOrFail();
        for (int t = 0; t < 2; t++) {
            double unit = t == 0 ? 0x1p-11 : 0x1p-8;
            for (int i = 0; i < count; i++) {
                double exact = 0;
                double magnitude = 0;
                for (Ranks.Outcome<double[][]> outcome : outcomes) {
                    exact += outcome.valueOrFail()[t][i];
                    magnitude += Math.abs(outcome.valueOrFail()[t][i]);
                }
                exact /= worldSize;
                assertEquals(exact, first[2 + t][i], unit * magnitude, "tensor " + t + " element " + i);
            }
            for (Ranks.Outcome<double[][]> outcome : outcomes) {
                assertBitIdentical(first[2 + t], outcome.valueOrFail()[2 + t], "average of tensor " + t + " on rank "
                        + outcome.rank);
            }
        }
    }

    /** {@code count} values of {@code type} drawn from [-4, 4) by a generator seeded with the rank. */
    private static INDArray halfPrecision(DataType type, int rank, int count) {
        Random random = new Random(rank * 7919L + count);
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = random.nextFloat() * 8 - 4;
        }
        INDArray floats = Nd4j.createFromArray(values);
        INDArray converted = floats.castTo(type);
        floats.close();
        return converted;
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void tensorsLargerThanABucketGoThroughInWindows(Algorithm algorithm) {
        // A bucket of 40 bytes stands in for the 1 GiB one: windows of 10 floats or 5 doubles cut
        // through every kind of tensor (contiguous, 'f' order, strided view), one tensor spans
        // hundreds of windows, and the scalar and the empty tensor fall between them.
        for (DataType type : new DataType[] {DataType.FLOAT, DataType.DOUBLE}) {
            for (int count : new int[] {7, 1009}) {
                checkExact(algorithm, 3, type, count, Map.of("chunkBytes", "16", "bucketBytes", "40"));
            }
        }
    }

    private void checkExact(Algorithm algorithm, int worldSize, DataType type, int count, Map<String, String> options) {
        // Every array is closed once checked: ND4J frees native memory only when told (or when the
        // collector happens to run), and a sweep makes gigabytes of them.
        List<Ranks.Outcome<INDArray[][]>> outcomes = withReusedGroup(algorithm, worldSize, CALL_TIMEOUT,
                options, (rank, aggregator) -> {
                    INDArray[] inputs = callTensors(type, rank, count);
                    INDArray[] before = copies(inputs);
                    try {
                        INDArray[] averaged = aggregator.reduceGradients(inputs);
                        INDArray[] broadcast = aggregator.broadcastParams(inputs);
                        for (int t = 0; t < inputs.length; t++) {
                            assertArrayEquals(values(before[t]), values(inputs[t]), "rank " + rank + " input " + t
                                    + " was modified");
                            assertNotSame(inputs[t], averaged[t], "reduceGradients result " + t + " is a new array");
                            assertNotSame(inputs[t], broadcast[t], "broadcastParams result " + t + " is a new array");
                        }
                        return new INDArray[][] {averaged, broadcast};
                    } finally {
                        TensorMemory.close(inputs);
                        TensorMemory.close(before);
                    }
                });
        try {
            List<double[][]> averages = new ArrayList<>();
            List<double[][]> broadcasts = new ArrayList<>();
            INDArray[] shapes = callTensors(type, 0, count);
            try {
                for (Ranks.Outcome<INDArray[][]> outcome : outcomes) {
                    INDArray[][] results = outcome.valueOrFail();
                    averages.add(ClosedForm.check("reduceGradients", outcome.rank, results[0], shapes, type,
                            (t, i) -> average(worldSize, t, i)));
                    broadcasts.add(ClosedForm.check("broadcastParams", outcome.rank, results[1], shapes, type,
                            (t, i) -> value(0, t, i)));
                }
            } finally {
                TensorMemory.close(shapes);
                for (Ranks.Outcome<INDArray[][]> outcome : outcomes) {
                    if (outcome.value != null) {
                        TensorMemory.close(outcome.value[0]);
                        TensorMemory.close(outcome.value[1]);
                    }
                }
            }
            for (int rank = 1; rank < worldSize; rank++) {
                for (int t = 0; t < shapes.length; t++) {
                    assertBitIdentical(averages.get(0)[t], averages.get(rank)[t], "average of tensor " + t + " on rank "
                            + rank + " and rank 0");
                    assertBitIdentical(broadcasts.get(0)[t], broadcasts.get(rank)[t], "broadcast of tensor " + t
                            + " on rank " + rank + " and rank 0");
                }
            }
        } catch (AssertionError | RuntimeException wrong) {
            // A wrong result may leave the group out of step (a stale message, say): the next case
            // must not inherit it, so that a bug shows in its own case only.
            reused.discard();
            throw wrong;
        }
    }

    private static void assertBitIdentical(double[] a, double[] b, String what) {
        assertEquals(a.length, b.length, what);
        for (int i = 0; i < a.length; i++) {
            if (Double.doubleToRawLongBits(a[i]) != Double.doubleToRawLongBits(b[i])) {
                fail(what + " differ at element " + i + ": " + a[i] + " vs " + b[i]);
            }
        }
    }

    @TestFactory
    Stream<DynamicTest> oneContiguousTensorPerTypeIsReducedInItsResultExactly() {
        // The path that works in the result array itself (no bucket): one 'c'-order tensor of each
        // type, at awkward counts, whole and cut into windows by a tiny bucket.
        List<DynamicTest> tests = new ArrayList<>();
        // The subclass's world sizes, up to 5 (3 in the reduced sweep): the larger ones add time and no other path.
        int largest = sweep() == Sweep.FULL ? 5 : 3;
        for (int worldSize : Arrays.stream(worldSizes()).filter(n -> n <= largest).toArray()) {
            for (Algorithm algorithm : Algorithm.values()) {
                for (int count : new int[] {1, 2, 7, 1009, 100_003}) {
                    for (String bucketBytes : new String[] {"1073741824", "40"}) {
                        if (count > 1009 && bucketBytes.equals("40")) {
                            continue;
                        }
                        String name = algorithm + " n=" + worldSize + " count=" + count + " bucket=" + bucketBytes;
                        tests.add(DynamicTest.dynamicTest(name, () -> checkInResult(algorithm, worldSize, count,
                                Map.of("chunkBytes", count <= 1009 ? "16" : "1048576", "bucketBytes", bucketBytes))));
                    }
                }
            }
        }
        return tests.stream();
    }

    private void checkInResult(Algorithm algorithm, int worldSize, int count, Map<String, String> options) {
        // Every array is closed in the rank's own body: ND4J frees native memory only when told
        // (or when the collector happens to run), and these are tens of MB a rank. Each result is
        // checked bit for bit against its closed form, so the ranks' results are identical too.
        List<Ranks.Outcome<Object>> outcomes = withReusedGroup(algorithm, worldSize, CALL_TIMEOUT,
                options, (rank, aggregator) -> {
                    INDArray[] inputs = {filled(DataType.FLOAT, rank, 0, count), filled(DataType.DOUBLE, rank, 1, 3,
                            count)};
                    INDArray[] before = copies(inputs);
                    INDArray[] averaged = aggregator.reduceGradients(inputs);
                    INDArray[] broadcast = aggregator.broadcastParams(inputs);
                    try {
                        for (int t = 0; t < inputs.length; t++) {
                            int tensor = t;
                            assertArrayEquals(values(before[t]), values(inputs[t]), "rank " + rank + " input " + t
                                    + " was modified");
                            ClosedForm.check("reduceGradients", rank, new INDArray[] {averaged[t]},
                                    new INDArray[] {inputs[t]}, inputs[t].dataType(),
                                    (unused, i) -> average(worldSize, tensor, i));
                            ClosedForm.check("broadcastParams", rank, new INDArray[] {broadcast[t]},
                                    new INDArray[] {inputs[t]}, inputs[t].dataType(),
                                    (unused, i) -> value(0, tensor, i));
                        }
                        return null;
                    } finally {
                        TensorMemory.close(inputs);
                        TensorMemory.close(before);
                        TensorMemory.close(averaged);
                        TensorMemory.close(broadcast);
                    }
                });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void theCallingThreadAllocatesOnlyTheResultsInTheSteadyState(Algorithm algorithm) {
        // Per call, beyond what making the result array costs (ND4J's objects, about 2 KB), a rank's
        // thread may allocate a few small objects (the call's deadline, the returned array) and
        // nothing that grows with the size: 1 KiB and 4 MiB must cost the same.
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        // Without the counter every reading is -1 and the differences below 0: nothing would be checked.
        assumeTrue(threads.isThreadAllocatedMemoryEnabled(), "per-thread allocation counting is off");
        for (int count : new int[] {256, 1 << 20}) {
            int calls = count < 1000 ? 400 : 24;
            List<Ranks.Outcome<long[]>> outcomes = withReusedGroup(algorithm, 3, Duration.ofSeconds(60), Map.of(),
                    (rank, aggregator) -> {
                        INDArray input = filled(DataType.FLOAT, rank, 0, count);
                        long id = Thread.currentThread().getId();
                        for (int i = 0; i < 3 * calls; i++) {
                            TensorMemory.close(aggregator.reduceGradients(input));
                        }
                        // The least of a few rounds: a round in which the thread happened to wait more often
                        // (each wait may allocate a queue node) or met a one-off lazy initialisation says
                        // nothing about the steady state, and one such round was enough to fail this test.
                        long perCall = Long.MAX_VALUE;
                        for (int round = 0; round < ALLOCATION_ROUNDS; round++) {
                            long before = threads.getThreadAllocatedBytes(id);
                            for (int i = 0; i < calls; i++) {
                                TensorMemory.close(aggregator.reduceGradients(input));
                            }
                            perCall = Math.min(perCall, (threads.getThreadAllocatedBytes(id) - before) / calls);
                        }
                        // What the result alone costs: the same array made, viewed and freed as a call does.
                        long[] shape = {count};
                        for (int i = 0; i < 3 * calls; i++) {
                            makeResult(shape, count);
                        }
                        long result = Long.MAX_VALUE;
                        for (int round = 0; round < ALLOCATION_ROUNDS; round++) {
                            long before = threads.getThreadAllocatedBytes(id);
                            for (int i = 0; i < calls; i++) {
                                makeResult(shape, count);
                            }
                            result = Math.min(result, (threads.getThreadAllocatedBytes(id) - before) / calls);
                        }
                        return new long[] {perCall, result};
                    });
            for (Ranks.Outcome<long[]> outcome : outcomes) {
                long[] bytes = outcome.valueOrFail();
                System.out.printf("allocation %s %s count=%d rank %d: %d B per call, of which the result %d B%n",
                        getClass().getSimpleName(), algorithm, count, outcome.rank, bytes[0], bytes[1]);
                assertTrue(bytes[0] - bytes[1] <= MAX_CALL_ALLOCATION_BYTES, algorithm + " with " + count
                        + " floats on rank " + outcome.rank + " allocated " + bytes[0] + " bytes per call, " + bytes[1]
                        + " of them for the result: more than " + MAX_CALL_ALLOCATION_BYTES + " beyond it");
            }
        }
    }

    /** Measuring rounds per figure; the least is kept. */
    private static final int ALLOCATION_ROUNDS = 3;

    /** Bytes a call may allocate on the calling thread beyond its result arrays. */
    private static final long MAX_CALL_ALLOCATION_BYTES = 512;

    private static void makeResult(long[] shape, int count) {
        INDArray result = io.ringstar.internal.tensor.TensorBucket.newResult(
                io.ringstar.internal.tensor.ElementType.FLOAT, shape.clone());
        io.ringstar.internal.tensor.TensorMemory.bytes(result, 0, count * Float.BYTES);
        TensorMemory.close(result);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void floatAndDoubleTensorsMixInOneCall(Algorithm algorithm) {
        int worldSize = 3;
        List<Ranks.Outcome<INDArray[]>> outcomes = withReusedGroup(algorithm, worldSize, 64,
                (rank, aggregator) -> aggregator.reduceGradients(filled(DataType.DOUBLE, rank, 0, 101),
                        filled(DataType.FLOAT, rank, 1, 7, 11), filled(DataType.DOUBLE, rank, 2, 3)));
        for (Ranks.Outcome<INDArray[]> outcome : outcomes) {
            INDArray[] results = outcome.valueOrFail();
            DataType[] types = {DataType.DOUBLE, DataType.FLOAT, DataType.DOUBLE};
            for (int t = 0; t < 3; t++) {
                assertEquals(types[t], results[t].dataType());
                double[] actual = values(results[t]);
                for (int i = 0; i < actual.length; i++) {
                    double exact = average(worldSize, t, i);
                    double want = types[t] == DataType.FLOAT ? (float) exact : exact;
                    assertEquals(want, actual[i], 0.0, "tensor " + t + " element " + i);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void callsWithNoTensorsStillMeet(Algorithm algorithm) {
        List<Ranks.Outcome<Integer>> outcomes = withReusedGroup(algorithm, 3, 1 << 20,
                (rank, aggregator) -> aggregator.reduceGradients().length + aggregator.broadcastParams().length);
        outcomes.forEach(outcome -> assertEquals(0, outcome.valueOrFail()));
        // They meet: a rank that passes a tensor while the others pass none is caught by all.
        List<Ranks.Outcome<Object>> mismatched = withAggregators(algorithm, 3, Duration.ofSeconds(30), 1 << 20,
                (rank, aggregator) -> rank == 2 ? aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 3))
                        : aggregator.reduceGradients());
        assertAllFailWith(CollectiveMismatchException.class, "reduceGradients", mismatched);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void manyCallsInARowStayInStep(Algorithm algorithm) {
        int worldSize = 4;
        List<Ranks.Outcome<Object>> outcomes = withReusedGroup(algorithm, worldSize, 256,
                (rank, aggregator) -> {
                    for (int step = 0; step < 20; step++) {
                        int count = 1 + step * 37;
                        INDArray[] result = aggregator.reduceGradients(filled(DataType.FLOAT, rank, step % 4, count));
                        double[] actual = values(result[0]);
                        for (int i = 0; i < count; i++) {
                            assertEquals((float) average(worldSize, step % 4, i), actual[i], 0.0,
                                    "step " + step + " element " + i);
                        }
                    }
                    return null;
                });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void buffersDoNotGrowWithTheWorldSize(Algorithm algorithm) {
        // The star's server reduces as chunks stream in: it holds its own bucket and one receive
        // buffer whether 1 or 7 workers send to it. The ring's ranks hold the same.
        long[] serverBytes = new long[2];
        int[] worldSizes = {2, 7};
        for (int w = 0; w < 2; w++) {
            int worldSize = worldSizes[w];
            List<Ranks.Outcome<Long>> outcomes = withReusedGroup(algorithm, worldSize, 1 << 16,
                    (rank, aggregator) -> {
                        aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 300_000));
                        return aggregator instanceof AllReduceAggregator
                                ? ((AllReduceAggregator) aggregator).bufferBytes()
                                : ((ParameterServer) aggregator).bufferBytes();
                    });
            serverBytes[w] = outcomes.get(0).valueOrFail();
            for (Ranks.Outcome<Long> outcome : outcomes) {
                assertEquals(serverBytes[w], outcome.valueOrFail(),
                        "rank " + outcome.rank + " holds as much as rank 0");
            }
        }
        assertEquals(serverBytes[0], serverBytes[1], "rank 0's buffers at world size 2 and 7");
        assertTrue(serverBytes[0] < 300_000 * 4 + (1 << 16) + 4096, "one bucket and one chunk: " + serverBytes[0]);
    }

    // ---------------------------------------------------------------- failures

    /** Every rank's outcome must be an exception of {@code type} that names the operation and its rank. */
    private static <T> void assertAllFailWith(Class<? extends CollectiveException> type, String operation,
            List<Ranks.Outcome<T>> outcomes) {
        for (Ranks.Outcome<T> outcome : outcomes) {
            assertNotNull(outcome.error, "rank " + outcome.rank + " should have failed but returned");
            CollectiveException e = assertInstanceOf(type, outcome.error,
                    "rank " + outcome.rank + " failed with " + outcome.error);
            assertEquals(outcome.rank, e.rank(), e.getMessage());
            assertTrue(e.getMessage().startsWith(operation + " on rank " + outcome.rank), e.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void differentTensorCountsAreAMismatchOnEveryRank(Algorithm algorithm) {
        List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 4, Duration.ofSeconds(30), 64,
                (rank, aggregator) -> rank == 2
                        ? aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 10),
                                filled(DataType.FLOAT, rank, 1, 3))
                        : aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 10)));
        assertAllFailWith(CollectiveMismatchException.class, "reduceGradients", outcomes);
        assertTrue(outcomes.stream().anyMatch(
                o -> o.error.getMessage().matches("(?s).*\\bpassed 2 tensors, this rank 1\\b.*")
                        || o.error.getMessage().matches("(?s).*\\bpassed 1 tensors, this rank 2\\b.*")),
                "some rank names both tensor counts: " + outcomes.stream().map(o -> o.error.getMessage()).toList());
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void differentShapesOfTheSameSizeAreAMismatchOnEveryRank(Algorithm algorithm) {
        List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 3, Duration.ofSeconds(30), 1 << 20,
                (rank, aggregator) -> aggregator.reduceGradients(rank == 1
                        ? filled(DataType.FLOAT, rank, 0, 3, 2) : filled(DataType.FLOAT, rank, 0, 2, 3)));
        assertAllFailWith(CollectiveMismatchException.class, "reduceGradients", outcomes);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void differentSizesAreAMismatchOnEveryRank(Algorithm algorithm) {
        List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 3, Duration.ofSeconds(30), 1 << 20,
                (rank, aggregator) -> aggregator.broadcastParams(
                        filled(DataType.DOUBLE, rank, 0, rank == 0 ? 1003 : 1000)));
        assertAllFailWith(CollectiveMismatchException.class, "broadcastParams", outcomes);
        // As counts of elements, not bare numbers that a port or a byte count could match.
        assertTrue(outcomes.stream().anyMatch(o -> o.error.getMessage().matches("(?s).*\\b1003 DOUBLE elements\\b.*")
                && o.error.getMessage().matches("(?s).*\\b1000 DOUBLE elements\\b.*")),
                "some rank names both element counts: " + outcomes.stream().map(o -> o.error.getMessage()).toList());
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void differentDataTypesAreAMismatchOnEveryRank(Algorithm algorithm) {
        List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 3, Duration.ofSeconds(30), 1 << 20,
                (rank, aggregator) -> aggregator.reduceGradients(
                        filled(rank == 0 ? DataType.DOUBLE : DataType.FLOAT, rank, 0, 100)));
        assertAllFailWith(CollectiveMismatchException.class, "reduceGradients", outcomes);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void differentOperationsAreAMismatchOnEveryRank(Algorithm algorithm) {
        for (int odd = 0; odd < 3; odd++) {
            int oddRank = odd;
            List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 3, Duration.ofSeconds(30), 1 << 20,
                    (rank, aggregator) -> rank == oddRank
                            ? aggregator.broadcastParams(filled(DataType.FLOAT, rank, 0, 10))
                            : aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 10)));
            for (Ranks.Outcome<Object> outcome : outcomes) {
                assertInstanceOf(CollectiveMismatchException.class, outcome.error,
                        "rank " + outcome.rank + " with rank " + oddRank + " broadcasting: " + outcome.error);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRankThatNeverArrivesTimesTheOthersOut(Algorithm algorithm) {
        Duration timeout = Duration.ofSeconds(1);
        // Rank 2 stays away until the others have given up (or three timeouts have passed), then leaves.
        CountDownLatch othersDone = new CountDownLatch(2);
        List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 3, timeout, 1 << 20,
                (rank, aggregator) -> {
                    if (rank == 2) {
                        othersDone.await(timeout.toMillis() * 3, TimeUnit.MILLISECONDS);
                        return null;
                    }
                    try {
                        return aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 1000));
                    } finally {
                        othersDone.countDown();
                    }
                });
        for (int rank = 0; rank < 2; rank++) {
            Ranks.Outcome<Object> outcome = outcomes.get(rank);
            CollectiveTimeoutException e = assertInstanceOf(CollectiveTimeoutException.class, outcome.error,
                    "rank " + rank + ": " + outcome.error);
            assertTrue(e.getMessage().startsWith("reduceGradients on rank " + rank), e.getMessage());
            assertTrue(outcome.elapsed.compareTo(timeout.multipliedBy(3)) < 0,
                    "rank " + rank + " failed after " + outcome.elapsed + " with a timeout of " + timeout);
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void afterAFailureEveryCallFailsFastWithTheSameCause(Algorithm algorithm) {
        List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 3, Duration.ofSeconds(30), 1 << 20,
                (rank, aggregator) -> {
                    CollectiveException first = assertThrows(CollectiveMismatchException.class,
                            () -> aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, rank == 1 ? 5 : 6)));
                    long start = System.nanoTime();
                    CollectiveException again = assertThrows(CollectiveMismatchException.class,
                            () -> aggregator.broadcastParams(filled(DataType.FLOAT, rank, 0, 6)));
                    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "a later call fails at once");
                    assertSame(first, again.getCause(), "the later call carries the first failure");
                    assertTrue(again.getMessage().startsWith("broadcastParams on rank " + rank), again.getMessage());
                    return null;
                });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aRankThatFailsBetweenWindowsTellsTheOthersAtOnce(Algorithm algorithm) {
        // Rank 1's second tensor has been closed, so packing fails once the windows reach it,
        // after several windows have gone through: the others must hear of it, not time out.
        Duration timeout = Duration.ofSeconds(30);
        List<Ranks.Outcome<Object>> outcomes = withAggregators(algorithm, 3, timeout,
                Map.of("chunkBytes", "16", "bucketBytes", "400"), (rank, aggregator) -> {
                    INDArray second = filled(DataType.FLOAT, rank, 1, 50);
                    if (rank == 1) {
                        second.close();
                    }
                    return aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 1000), second);
                });
        for (Ranks.Outcome<Object> outcome : outcomes) {
            assertNotNull(outcome.error, "rank " + outcome.rank + " should have failed");
            CollectiveException e = assertInstanceOf(CollectiveException.class, outcome.error,
                    "rank " + outcome.rank + ": " + outcome.error);
            assertEquals(outcome.rank, e.rank(), e.getMessage());
            assertTrue(outcome.elapsed.compareTo(Duration.ofSeconds(10)) < 0,
                    "rank " + outcome.rank + " took " + outcome.elapsed + " against a " + timeout + " timeout");
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void aPeerThatLeavesFailsTheOthersPromptly(Algorithm algorithm) {
        List<Transport> transports = createGroup(3, Duration.ofSeconds(30));
        List<GradientAggregator> aggregators = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            aggregators.add(algorithm.create(configBuilder(3, rank, Duration.ofSeconds(30)).build(),
                    transports.get(rank)));
        }
        try {
            List<Ranks.Outcome<Object>> outcomes = Ranks.run(3, LIMIT, rank -> {
                if (rank == 1) {
                    Thread.sleep(300);
                    aggregators.get(1).close();
                    return null;
                }
                return aggregators.get(rank).reduceGradients(filled(DataType.FLOAT, rank, 0, 100_000));
            });
            for (int rank : new int[] {0, 2}) {
                Ranks.Outcome<Object> outcome = outcomes.get(rank);
                assertInstanceOf(PeerFailureException.class, outcome.error, "rank " + rank + ": " + outcome.error);
                assertTrue(outcome.elapsed.compareTo(Duration.ofSeconds(10)) < 0,
                        "rank " + rank + " took " + outcome.elapsed + " against a 30 s timeout");
                assertTrue(outcome.error.getMessage().matches("(?s).*\\brank 1\\b.*"), outcome.error.getMessage());
            }
        } finally {
            aggregators.forEach(GradientAggregator::close);
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void unsupportedDataTypesAreRefusedBeforeAnythingIsSent(Algorithm algorithm) {
        int worldSize = 3;
        List<Ranks.Outcome<Object>> outcomes = withReusedGroup(algorithm, worldSize, 1 << 20,
                (rank, aggregator) -> {
                    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                            () -> aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 4),
                                    filled(DataType.FLOAT, rank, 1, 4).castTo(DataType.INT32)));
                    assertTrue(refused.getMessage().contains("INT") && refused.getMessage().contains("tensor 1")
                            && refused.getMessage().contains("rank " + rank), refused.getMessage());
                    // The group is still usable: nothing was sent.
                    INDArray[] result = aggregator.reduceGradients(filled(DataType.FLOAT, rank, 0, 4));
                    assertEquals((float) average(worldSize, 0, 3), result[0].getFloat(3), 0.0);
                    return null;
                });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    // ---------------------------------------------------------------- reduceGradientsInto

    @TestFactory
    Stream<DynamicTest> reduceGradientsIntoHasTheAveragesBitsInPlaceAndApart() {
        // 3 ranks, and 5 in the full sweep; a small count cut by 16-byte chunks and 400-byte windows
        // (which cut the tensors), and a large one in one window of 64 KiB chunks.
        List<DynamicTest> tests = new ArrayList<>();
        for (int worldSize : sweep() == Sweep.FULL ? new int[] {3, 5} : new int[] {3}) {
            for (Algorithm algorithm : Algorithm.values()) {
                tests.add(DynamicTest.dynamicTest(algorithm + " n=" + worldSize + " count=211 windows of 400 B",
                        () -> checkInto(algorithm, worldSize, 211, Map.of("chunkBytes", "16", "bucketBytes", "400"))));
                tests.add(DynamicTest.dynamicTest(algorithm + " n=" + worldSize + " count=100003",
                        () -> checkInto(algorithm, worldSize, 100_003, Map.of("chunkBytes", "65536"))));
            }
        }
        return tests.stream();
    }

    /**
     * Every rank passes the same calls of reduceGradientsInto: float and double tensors of every
     * kind (vector, 'f' order, scalar, strided view, empty) into separate results of every kind, in
     * place, half and half; views of one flattened buffer in place, and one vector beside an empty
     * marker in place (both reduced where they lie). Each is checked against the closed form, bit for
     * bit; then random values, whose bits depend on the order of the additions, must come out with
     * reduceGradients' bits, apart and in place.
     */
    private void checkInto(Algorithm algorithm, int worldSize, int count, Map<String, String> options) {
        List<Ranks.Outcome<Object>> outcomes = withReusedGroup(algorithm, worldSize, CALL_TIMEOUT, options,
                (rank, aggregator) -> {
                    List<INDArray> made = new ArrayList<>();
                    try {
                        INDArray[] expectedShapes = track(made, mixedTensors(rank, count));
                        // Apart: the inputs stay as they were.
                        INDArray[] inputs = track(made, mixedTensors(rank, count));
                        INDArray[] before = track(made, copies(inputs));
                        INDArray[] apart = track(made, mixedTensors(rank + 100, count));
                        aggregator.reduceGradientsInto(inputs, apart);
                        checkMixedAverage(rank, worldSize, apart, expectedShapes, "apart");
                        for (int t = 0; t < inputs.length; t++) {
                            assertArrayEquals(values(before[t]), values(inputs[t]), "input " + t + " was modified");
                        }
                        // In place, and half in place, half apart.
                        INDArray[] inPlace = track(made, mixedTensors(rank, count));
                        aggregator.reduceGradientsInto(inPlace, inPlace);
                        checkMixedAverage(rank, worldSize, inPlace, expectedShapes, "in place");
                        INDArray[] half = track(made, mixedTensors(rank, count));
                        INDArray[] halfResults = track(made, mixedTensors(rank + 100, count));
                        for (int t = 0; t < half.length; t += 2) {
                            halfResults[t] = half[t];
                        }
                        aggregator.reduceGradientsInto(half, halfResults);
                        checkMixedAverage(rank, worldSize, halfResults, expectedShapes, "half in place");
                        checkFlattenedViews(rank, worldSize, count, aggregator, made);
                        checkSameBitsAsReduceGradients(rank, count, aggregator, made);
                        return null;
                    } finally {
                        made.forEach(TensorMemory::close);
                    }
                });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    /** The call's tensors ({@link TensorFixtures#callTensors}) of FLOAT then of DOUBLE: 10 tensors, two groups. */
    private static INDArray[] mixedTensors(int rank, int count) {
        INDArray[] floats = callTensors(DataType.FLOAT, rank, count);
        INDArray[] doubles = callTensors(DataType.DOUBLE, rank, count);
        INDArray[] all = Arrays.copyOf(floats, floats.length + doubles.length);
        System.arraycopy(doubles, 0, all, floats.length, doubles.length);
        return all;
    }

    private static INDArray[] track(List<INDArray> made, INDArray[] tensors) {
        made.addAll(Arrays.asList(tensors));
        return tensors;
    }

    private static void checkMixedAverage(int rank, int worldSize, INDArray[] results, INDArray[] shapes,
            String how) {
        int half = results.length / 2;
        ClosedForm.check("reduceGradientsInto " + how + " (float)", rank, Arrays.copyOfRange(results, 0, half),
                Arrays.copyOfRange(shapes, 0, half), DataType.FLOAT, (t, i) -> average(worldSize, t, i));
        ClosedForm.check("reduceGradientsInto " + how + " (double)", rank, Arrays.copyOfRange(results, half,
                results.length), Arrays.copyOfRange(shapes, half, results.length), DataType.DOUBLE,
                (t, i) -> average(worldSize, t, i));
    }

    /**
     * DL4J's shape of a call: views of one flattened gradient, in order, averaged in place; and the
     * flattened gradient itself beside an empty marker of shape [batch, 0].
     */
    private static void checkFlattenedViews(int rank, int worldSize, int count, GradientAggregator aggregator,
            List<INDArray> made) {
        long[][] shapes = {{count}, {3, 7}, {1}, {2, 5}};
        long total = 0;
        for (long[] shape : shapes) {
            total += Arrays.stream(shape).reduce(1, (a, b) -> a * b);
        }
        INDArray flat = Nd4j.create(DataType.FLOAT, 1, total);
        made.add(flat);
        INDArray[] views = new INDArray[shapes.length];
        long offset = 0;
        for (int t = 0; t < shapes.length; t++) {
            long length = Arrays.stream(shapes[t]).reduce(1, (a, b) -> a * b);
            views[t] = flat.get(NDArrayIndex.point(0), NDArrayIndex.interval(offset, offset + length))
                    .reshape('c', shapes[t]);
            views[t].assign(filled(DataType.FLOAT, rank, t, shapes[t]));
            offset += length;
        }
        INDArray[] expectedShapes = new INDArray[shapes.length];
        for (int t = 0; t < shapes.length; t++) {
            expectedShapes[t] = Nd4j.create(DataType.FLOAT, shapes[t]);
            made.add(expectedShapes[t]);
        }
        aggregator.reduceGradientsInto(views, views);
        ClosedForm.check("reduceGradientsInto views of one buffer", rank, views, expectedShapes, DataType.FLOAT,
                (t, i) -> average(worldSize, t, i));

        INDArray gradient = filled(DataType.FLOAT, rank, 0, 1, count);
        INDArray marker = Nd4j.create(DataType.FLOAT, 32, 0);
        made.add(gradient);
        made.add(marker);
        INDArray[] step = {gradient, marker};
        aggregator.reduceGradientsInto(step, step);
        ClosedForm.check("reduceGradientsInto a vector and an empty marker", rank, new INDArray[] {gradient},
                new INDArray[] {gradient}, DataType.FLOAT, (t, i) -> average(worldSize, 0, i));
        assertArrayEquals(new long[] {32, 0}, marker.shape());
    }

    /** Random values in the mixed tensors' layouts: reduceGradients' bits, apart and in place. */
    private static void checkSameBitsAsReduceGradients(int rank, int count, GradientAggregator aggregator,
            List<INDArray> made) {
        INDArray[] random = track(made, mixedTensors(rank, count));
        Random values = new Random(31L * rank + count);
        for (INDArray tensor : random) {
            if (tensor.length() > 0) {
                double[] drawn = new double[(int) tensor.length()];
                for (int i = 0; i < drawn.length; i++) {
                    drawn[i] = (values.nextDouble() - 0.5) * Math.scalb(1.0, values.nextInt(9) - 4);
                }
                tensor.assign(Nd4j.create(drawn, tensor.shape(), 'c').castTo(tensor.dataType()));
            }
        }
        INDArray[] expected = track(made, aggregator.reduceGradients(random));
        INDArray[] apart = track(made, mixedTensors(rank + 100, count));
        aggregator.reduceGradientsInto(random, apart);
        INDArray[] inPlace = track(made, copies(random));
        aggregator.reduceGradientsInto(inPlace, inPlace);
        for (int t = 0; t < random.length; t++) {
            assertBitIdentical(values(expected[t]), values(apart[t]), "rank " + rank + " tensor " + t + " apart");
            assertBitIdentical(values(expected[t]), values(inPlace[t]), "rank " + rank + " tensor " + t
                    + " in place");
        }
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void reduceGradientsIntoRefusesResultsThatDoNotFitBeforeAnythingIsSent(Algorithm algorithm) {
        int worldSize = 3;
        List<Ranks.Outcome<Object>> outcomes = withReusedGroup(algorithm, worldSize, 1 << 20,
                (rank, aggregator) -> {
                    INDArray a = filled(DataType.FLOAT, rank, 0, 6);
                    INDArray b = filled(DataType.DOUBLE, rank, 1, 2, 3);
                    INDArray[] grads = {a, b};
                    refused(rank, aggregator, grads, null, "the result array is null");
                    refused(rank, aggregator, grads, new INDArray[] {Nd4j.create(DataType.FLOAT, 6)},
                            "passed 1 results for 2 gradients");
                    refused(rank, aggregator, grads, new INDArray[] {Nd4j.create(DataType.FLOAT, 6), null},
                            "result 1 is null");
                    refused(rank, aggregator, grads, new INDArray[] {Nd4j.create(DataType.FLOAT, 6),
                        Nd4j.create(DataType.DOUBLE, 3, 2)}, "result 1 is DOUBLE[3, 2] but gradient 1 is DOUBLE[2, 3]");
                    refused(rank, aggregator, grads, new INDArray[] {Nd4j.create(DataType.DOUBLE, 6),
                        Nd4j.create(DataType.DOUBLE, 2, 3)}, "result 0 is DOUBLE[6] but gradient 0 is FLOAT[6]");
                    refused(rank, aggregator, new INDArray[] {a, b.castTo(DataType.INT32)}, new INDArray[] {a,
                        Nd4j.create(DataType.INT32, 2, 3)}, "tensor 1 has data type INT");
                    // Two results that share elements 4 and 5 of one buffer.
                    INDArray buffer = Nd4j.create(DataType.FLOAT, 10);
                    INDArray early = buffer.get(NDArrayIndex.interval(0, 6));
                    INDArray late = buffer.get(NDArrayIndex.interval(4, 10));
                    INDArray c = filled(DataType.FLOAT, rank, 2, 6);
                    refused(rank, aggregator, new INDArray[] {a, c}, new INDArray[] {early, late},
                            "result 1 and result 0 share memory");
                    // Each result the other's gradient.
                    refused(rank, aggregator, new INDArray[] {a, c}, new INDArray[] {c, a},
                            "share memory; a result may share memory only with its own gradient");
                    // A result that overlaps its own gradient without being it.
                    refused(rank, aggregator, new INDArray[] {early}, new INDArray[] {buffer.get(
                            NDArrayIndex.interval(2, 8))}, "result 0 and gradient 0 share memory");
                    // Nothing was sent: the group goes on.
                    aggregator.reduceGradientsInto(grads, grads);
                    assertEquals((float) average(worldSize, 0, 5), a.getFloat(5), 0.0);
                    assertEquals(average(worldSize, 1, 4), b.getDouble(1, 1), 0.0);
                    return null;
                });
        outcomes.forEach(Ranks.Outcome::valueOrFail);
    }

    private static void refused(int rank, GradientAggregator aggregator, INDArray[] grads, INDArray[] results,
            String detail) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> aggregator.reduceGradientsInto(grads, results), detail);
        assertTrue(e.getMessage().startsWith("reduceGradientsInto on rank " + rank + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(detail), e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void reduceGradientsIntoAllocatesABoundedAmountPerCall(Algorithm algorithm) {
        // No result to make: a call may allocate a few small objects (its deadline, a view when the
        // array changed) and nothing that grows with the size; apart, and in place as DataParallel's
        // step (a flattened gradient beside an empty marker), at 1 KiB and 4 MiB. What differs from
        // reduceGradients is the engine's, whatever the transport, and each transport's own
        // allocation per call is checked by the test above: this runs over the plain in-process
        // transport only (the full sweep, no suite options), to spare CI the seconds.
        assumeTrue(sweep() == Sweep.FULL && suiteOptions().isEmpty(), "run by the in-process suite");
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemoryEnabled(), "per-thread allocation counting is off");
        for (int count : new int[] {256, 1 << 20}) {
            int calls = count < 1000 ? 100 : 8;
            List<Ranks.Outcome<long[]>> outcomes = withReusedGroup(algorithm, 3, Duration.ofSeconds(60), Map.of(),
                    (rank, aggregator) -> {
                        INDArray gradient = filled(DataType.FLOAT, rank, 0, 1, count);
                        INDArray result = Nd4j.create(DataType.FLOAT, 1, count);
                        INDArray marker = Nd4j.create(DataType.FLOAT, 32, 0);
                        INDArray[][][] shapes = {
                            {{gradient}, {result}},
                            {{gradient, marker}, {gradient, marker}},
                        };
                        long id = Thread.currentThread().getId();
                        long[] perCall = new long[shapes.length];
                        try {
                            for (int s = 0; s < shapes.length; s++) {
                                INDArray[] grads = shapes[s][0];
                                INDArray[] results = shapes[s][1];
                                for (int i = 0; i < 3 * calls; i++) {
                                    aggregator.reduceGradientsInto(grads, results);
                                }
                                perCall[s] = Long.MAX_VALUE;
                                for (int round = 0; round < ALLOCATION_ROUNDS; round++) {
                                    long before = threads.getThreadAllocatedBytes(id);
                                    for (int i = 0; i < calls; i++) {
                                        aggregator.reduceGradientsInto(grads, results);
                                    }
                                    perCall[s] = Math.min(perCall[s],
                                            (threads.getThreadAllocatedBytes(id) - before) / calls);
                                }
                            }
                        } finally {
                            TensorMemory.close(gradient, result, marker);
                        }
                        return perCall;
                    });
            String[] names = {"apart", "in place beside a marker"};
            for (Ranks.Outcome<long[]> outcome : outcomes) {
                long[] bytes = outcome.valueOrFail();
                for (int s = 0; s < bytes.length; s++) {
                    System.out.printf("allocation %s %s reduceGradientsInto %s count=%d rank %d: %d B per call%n",
                            getClass().getSimpleName(), algorithm, names[s], count, outcome.rank, bytes[s]);
                    assertTrue(bytes[s] <= MAX_CALL_ALLOCATION_BYTES, algorithm + " " + names[s] + " with " + count
                            + " floats on rank " + outcome.rank + " allocated " + bytes[s]
                            + " bytes per call, more than " + MAX_CALL_ALLOCATION_BYTES);
                }
            }
        }
    }
}
