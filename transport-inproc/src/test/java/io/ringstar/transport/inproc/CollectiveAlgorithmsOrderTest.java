package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.internal.algorithm.DirectReduce;
import io.ringstar.internal.algorithm.RecursiveDoubling;
import io.ringstar.internal.algorithm.RingReduceScatter;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.testing.Ranks;
import io.ringstar.testing.TensorFixtures;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Results of values whose sums round, so that the order of operands shows: recursive doubling is
 * bit-identical on every rank, and the direct reduce and the ring reduce-scatter combine in the
 * order their Javadoc writes down. And the aggregators' broadcast, which runs the ring broadcast
 * from rank 0, still gives every rank rank 0's parameters.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CollectiveAlgorithmsOrderTest {
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration WATCHDOG = Duration.ofSeconds(90);
    private static final ElementType FLOAT = ElementType.FLOAT;
    private static final int COUNT = 1009;
    private static final ReduceOp[] ROUNDING_OPS = {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PROD};

    /** Rank {@code rank}'s values: floats of every magnitude, whose sums and products round. */
    private static float[] randomValues(int rank, int count) {
        Random random = new Random(1000L + rank);
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = (float) ((random.nextDouble() * 2 - 1) * Math.pow(10, random.nextInt(7) - 3));
        }
        return values;
    }

    private static ByteBuffer buffer(float[] values) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(values.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            buffer.putFloat(i * Float.BYTES, values[i]);
        }
        return buffer;
    }

    private static float combine(ReduceOp op, float a, float b) {
        return op == ReduceOp.PROD ? a * b : a + b;
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 5, 6, 7, 8})
    void recursiveDoublingIsBitIdenticalOnEveryRank(int worldSize) {
        List<List<Long>> crcs = AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            List<Long> seen = new ArrayList<>();
            for (ReduceOp op : ROUNDING_OPS) {
                ByteBuffer result = Vectors.allocate(FLOAT, COUNT, 0);
                RecursiveDoubling.run(session.begin("allReduce", op, MessageHeader.NO_ROOT, FLOAT, COUNT),
                        buffer(randomValues(session.rank, COUNT)), result, 64);
                seen.add(Vectors.crc(result));
            }
            return seen;
        });
        CollectiveAlgorithmsTest.assertSameOnEveryRank(crcs);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 5})
    void directReduceCombinesTheRootFirstThenTheOthersByRank(int worldSize) {
        float[][] inputs = new float[worldSize][];
        for (int rank = 0; rank < worldSize; rank++) {
            inputs[rank] = randomValues(rank, COUNT);
        }
        AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            for (int root = 0; root < worldSize; root++) {
                for (ReduceOp op : ROUNDING_OPS) {
                    ByteBuffer result = Vectors.allocate(FLOAT, COUNT, 0);
                    DirectReduce.run(session.begin("reduce", op, root, FLOAT, COUNT), buffer(inputs[session.rank]),
                            result, 64);
                    if (session.rank != root) {
                        continue;
                    }
                    float[] expected = new float[COUNT];
                    for (int i = 0; i < COUNT; i++) {
                        float acc = inputs[root][i];
                        for (int peer = 0; peer < worldSize; peer++) {
                            if (peer != root) {
                                acc = combine(op, acc, inputs[peer][i]);
                            }
                        }
                        expected[i] = op == ReduceOp.AVG ? acc / worldSize : acc;
                    }
                    assertBitsEqual(expected, result, op + " to root " + root);
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 5})
    void reduceScatterCombinesAroundTheRingFromTheNextRank(int worldSize) {
        int segment = COUNT;
        int total = segment * worldSize;
        float[][] inputs = new float[worldSize][];
        for (int rank = 0; rank < worldSize; rank++) {
            inputs[rank] = randomValues(rank, total);
        }
        AlgorithmGroup.runAll(worldSize, false, CALL_TIMEOUT, WATCHDOG, session -> {
            for (ReduceOp op : ROUNDING_OPS) {
                ByteBuffer result = Vectors.allocate(FLOAT, segment, 0);
                RingReduceScatter.run(session.begin("reduceScatter", op, MessageHeader.NO_ROOT, FLOAT, total),
                        buffer(inputs[session.rank]), Vectors.allocate(FLOAT, total, 0), result, 64);
                int g = session.rank;
                float[] expected = new float[segment];
                for (int i = 0; i < segment; i++) {
                    int at = g * segment + i;
                    // Starts as rank g+1's input; g+2, ..., g each combine their own with the partial.
                    float acc = inputs[(g + 1) % worldSize][at];
                    for (int step = 2; step <= worldSize; step++) {
                        acc = combine(op, inputs[(g + step) % worldSize][at], acc);
                    }
                    expected[i] = op == ReduceOp.AVG ? acc / worldSize : acc;
                }
                assertBitsEqual(expected, result, op + " segment " + g);
            }
            return null;
        });
    }

    @Test
    void aggregatorBroadcastStillSendsRankZerosParameters() {
        List<Transport> transports = InProcessTransport.createGroup(3, CALL_TIMEOUT);
        List<double[]> received = Ranks.runAll(3, WATCHDOG, rank -> {
            DistributedConfig config = DistributedConfig.builder().worldSize(3).rank(rank).timeout(CALL_TIMEOUT)
                    .build();
            try (GradientAggregator aggregator = new AllReduceAggregator(config, transports.get(rank))) {
                INDArray[] result = aggregator.broadcastParams(TensorFixtures.filled(DataType.FLOAT, rank, 0, 5, 7));
                return TensorFixtures.values(result[0]);
            }
        });
        double[] rankZeros = TensorFixtures.values(TensorFixtures.filled(DataType.FLOAT, 0, 0, 5, 7));
        for (int rank = 0; rank < 3; rank++) {
            assertEquals(Arrays.toString(rankZeros), Arrays.toString(received.get(rank)), "rank " + rank);
        }
    }

    private static void assertBitsEqual(float[] expected, ByteBuffer result, String what) {
        for (int i = 0; i < expected.length; i++) {
            float got = result.getFloat(i * Float.BYTES);
            assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(got),
                    what + ": element " + i + " is " + got + ", expected " + expected[i]);
        }
    }
}
