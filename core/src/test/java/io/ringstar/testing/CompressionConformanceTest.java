package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.HalfFloats;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Option {@code compression} of the ring, the star and the communicator's all-reduce, written once
 * over the transport a subclass supplies: top-k's error feedback loses nothing (what was sent plus
 * what every rank kept is the sum of the inputs, exactly, over calls of several layouts), topk:1.0
 * is the uncompressed result, the star's and the ring's top-k agree bit for bit whatever the number
 * of servers, fp16 and bf16 stay within their documented bound of the float64 result, results are
 * bit-identical on every rank, ranks that disagree on the option all fail with a mismatch, what
 * is never compressed is not, and the bytes sent ({@code bytesSent()}) shrink as they should.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class CompressionConformanceTest extends CompressionCases {
    @ParameterizedTest
    @EnumSource(Target.class)
    void topkSentPlusKeptIsTheSumOfTheInputs(Target target) {
        assumeCase(target);
        for (String compression : new String[] {"topk:0.1", "topk:0.35"}) {
            int worldSize = target.exactWorldSize();
            List<Ranks.Outcome<Ledger>> outcomes = ledgers(target, worldSize, compression, true);
            String what = target + " " + compression;
            assertBitIdentical(outcomes, what);
            double keptMagnitude = 0;
            for (int layout = 0; layout < 3; layout++) {
                double[][] sent = outcomes.get(0).valueOrFail().sent.get(layout);
                for (int t = 0; t < sent.length; t++) {
                    for (int i = 0; i < sent[t].length; i++) {
                        double inputs = 0;
                        double kept = 0;
                        for (Ranks.Outcome<Ledger> outcome : outcomes) {
                            inputs += outcome.value.inputs.get(layout)[t][i];
                            kept += outcome.value.kept.get(layout)[t][i];
                            keptMagnitude += Math.abs(outcome.value.kept.get(layout)[t][i]);
                        }
                        assertEquals(inputs, sent[t][i] + kept, 0.0, what + ": layout " + layout + ", tensor " + t
                                + ", element " + i + ": sent " + sent[t][i] + " plus kept " + kept);
                    }
                }
            }
            assertTrue(keptMagnitude > 0, what + ": nothing was kept back, so nothing was compressed");
        }
    }

    @ParameterizedTest
    @EnumSource(Target.class)
    void topkOfEverythingIsTheUncompressedResult(Target target) {
        assumeCase(target);
        int worldSize = target.exactWorldSize();
        List<Ranks.Outcome<Ledger>> outcomes = ledgers(target, worldSize, "topk:1.0", true);
        assertBitIdentical(outcomes, target + " topk:1.0");
        for (Ranks.Outcome<Ledger> outcome : outcomes) {
            for (int call = 0; call < CALLS.length; call++) {
                double[][] results = outcome.valueOrFail().results.get(call);
                List<double[][]> inputs = new ArrayList<>();
                for (int r = 0; r < worldSize; r++) {
                    inputs.add(values(inputs(CALLS[call], r, call, true)));
                }
                for (int t = 0; t < results.length; t++) {
                    for (int i = 0; i < results[t].length; i++) {
                        double sum = 0;
                        for (double[][] rank : inputs) {
                            sum += rank[t][i];
                        }
                        double expected = target.op == ReduceOp.AVG ? sum / worldSize : sum;
                        assertEquals(expected, results[t][i], 0.0, target + " topk:1.0 on rank " + outcome.rank
                                + ": call " + call + ", tensor " + t + ", element " + i);
                    }
                }
            }
            for (double[][] kept : outcome.value.kept.values()) {
                for (double[] tensor : kept) {
                    for (double value : tensor) {
                        assertEquals(0.0, value, 0.0, "topk:1.0 keeps nothing back");
                    }
                }
            }
        }
    }

    /** The ring's, the communicator's and the star's top-k with 1, 2 or 3 servers: the same bits. */
    @Test
    void topkResultsDoNotDependOnTheTopologyOrTheServers() {
        Assumptions.assumeTrue(everyCase(), "in the full suite only");
        List<Ranks.Outcome<Ledger>> ring = ledgers(Target.RING, 3, "topk:0.2", false);
        assertBitIdentical(ring, "ring");
        List<List<Ranks.Outcome<Ledger>>> others = new ArrayList<>();
        others.add(ledgers(Target.COMMUNICATOR_RING_AVG, 3, "topk:0.2", false));
        for (int servers = 1; servers <= 3; servers++) {
            Map<String, String> options = new HashMap<>(same("topk:0.2", "64").apply(0));
            options.put(ParameterServer.SERVERS_OPTION, Integer.toString(servers));
            others.add(run(Target.STAR, 3, rank -> options, (rank, member) -> {
                Ledger ledger = new Ledger();
                for (int call = 0; call < CALLS.length; call++) {
                    ledger.results.add(values(member.allReduce(inputs(CALLS[call], rank, call, false))));
                }
                return ledger;
            }));
        }
        for (List<Ranks.Outcome<Ledger>> other : others) {
            List<Ranks.Outcome<Ledger>> pair = List.of(ring.get(0), other.get(0), other.get(1), other.get(2));
            assertBitIdentical(pair, "ring against another top-k");
        }
    }

    /**
     * fp16 and bf16: within {@code (n+1) u' (|x_1| + ... + |x_n|)} of the float64 sum (over {@code n}
     * for AVG, plus 2^-25), u' = u for FLOAT inputs and u + 2^-24 for DOUBLE; every value a 16-bit float.
     */
    @ParameterizedTest
    @EnumSource(Target.class)
    void halfPrecisionStaysWithinItsBound(Target target) {
        assumeCase(target);
        for (String compression : new String[] {"fp16", "bf16"}) {
            boolean bfloat = compression.equals("bf16");
            for (int worldSize : new int[] {3, 5}) {
                List<Ranks.Outcome<Ledger>> outcomes = run(target, worldSize, same(compression, "64"),
                        (rank, member) -> {
                            Ledger ledger = new Ledger();
                            for (int call = 0; call < 3; call++) {
                                ledger.results.add(values(member.allReduce(inputs(call, rank, call, false))));
                            }
                            return ledger;
                        });
                String what = target + " " + compression + " on " + worldSize + " ranks";
                assertBitIdentical(outcomes, what);
                for (int call = 0; call < 3; call++) {
                    checkBound(outcomes.get(0).value.results.get(call), call, worldSize, target.op, bfloat,
                            what + ", call " + call);
                }
            }
        }
    }

    private static void checkBound(double[][] results, int call, int worldSize, ReduceOp op, boolean bfloat,
            String what) {
        double u = bfloat ? 0x1p-8 : 0x1p-11;
        List<double[][]> inputs = new ArrayList<>();
        INDArray[] shapes = inputs(call, 0, call, false);
        for (int r = 0; r < worldSize; r++) {
            inputs.add(values(inputs(call, r, call, false)));
        }
        for (int t = 0; t < results.length; t++) {
            double unit = shapes[t].dataType() == DataType.DOUBLE ? u + 0x1p-24 : u;
            for (int i = 0; i < results[t].length; i++) {
                double sum = 0;
                double magnitudes = 0;
                for (double[][] rank : inputs) {
                    sum += rank[t][i];
                    magnitudes += Math.abs(rank[t][i]);
                }
                double bound = (worldSize + 1) * unit * magnitudes;
                double exact = sum;
                if (op == ReduceOp.AVG) {
                    exact /= worldSize;
                    bound = bound / worldSize + 0x1p-25;
                }
                double result = results[t][i];
                assertTrue(Math.abs(result - exact) <= bound, what + ", tensor " + t + ", element " + i + ": "
                        + result + " is " + Math.abs(result - exact) + " from " + exact + ", bound " + bound);
                float asFloat = (float) result;
                float through = bfloat ? HalfFloats.bfloat16ToFloat(HalfFloats.floatToBfloat16(asFloat))
                        : HalfFloats.halfToFloat(HalfFloats.floatToHalf(asFloat));
                assertEquals(asFloat, through, 0.0f, what + ": " + result + " did not come through 16 bits");
            }
        }
    }

    /** A rank with another compression than its peers: every rank fails with a mismatch, at once. */
    @ParameterizedTest
    @EnumSource(value = Target.class, names = {"RING", "STAR", "COMMUNICATOR_AUTO_SUM"})
    void ranksThatDisagreeOnCompressionAllFail(Target target) {
        assumeCase(target);
        String[][] disagreements = {{"none", "fp16"}, {"topk:0.1", "topk:0.2"}, {"bf16", "topk:0.5"}};
        for (String[] settings : disagreements) {
            List<Ranks.Outcome<Object>> outcomes = run(target, 3,
                    rank -> Map.of("compression", rank == 1 ? settings[1] : settings[0], "chunkBytes", "64"),
                    (rank, member) -> member.allReduce(inputs(0, rank, 0, false)));
            for (Ranks.Outcome<Object> outcome : outcomes) {
                assertInstanceOf(CollectiveMismatchException.class, outcome.error, target + " " + settings[0]
                        + " against " + settings[1] + ": rank " + outcome.rank + " did not fail with a mismatch");
            }
        }
    }

    /** With the checksum on (whole messages gathered and checked), the same bits as without. */
    @ParameterizedTest
    @EnumSource(value = Target.class, names = {"RING", "STAR", "COMMUNICATOR_AUTO_SUM"})
    void compressionWithTheChecksumGivesTheSameBits(Target target) {
        Assumptions.assumeTrue(everyCase(), "in the full suite only");
        for (String compression : new String[] {"fp16", "topk:0.35", "topk:1.0"}) {
            List<List<Ranks.Outcome<Ledger>>> runs = new ArrayList<>();
            for (String checksum : new String[] {DistributedConfig.CHECKSUM_NONE, DistributedConfig.CHECKSUM_CRC32C}) {
                Map<String, String> options = new HashMap<>(same(compression, "64").apply(0));
                options.put(DistributedConfig.CHECKSUM_OPTION, checksum);
                runs.add(run(target, 3, rank -> options, (rank, member) -> {
                    Ledger ledger = new Ledger();
                    for (int call = 0; call < CALLS.length; call++) {
                        ledger.results.add(values(member.allReduce(inputs(CALLS[call], rank, call, false))));
                    }
                    return ledger;
                }));
            }
            assertBitIdentical(List.of(runs.get(0).get(0), runs.get(1).get(0), runs.get(1).get(1), runs.get(1).get(2)),
                    target + " " + compression + " with and without the checksum");
        }
    }

    /** Bytes all ranks sent for one call of 100 003 floats with {@code compression}. */
    private long bytesSent(Target target, String compression) {
        List<Ranks.Outcome<Long>> outcomes = run(target, 3, same(compression, "65536"), (rank, member) -> {
            INDArray[] tensors = {Nd4j.rand(DataType.FLOAT, 100_003)};
            long before = member.bytesSent();
            member.allReduce(tensors);
            return member.bytesSent() - before;
        });
        long total = 0;
        for (Ranks.Outcome<Long> outcome : outcomes) {
            total += outcome.valueOrFail();
        }
        return total;
    }

    /**
     * The counter of bytes sent, and what compression saves: fp16 and bf16 half the payload (the
     * same messages), topk:0.01 a few percent on the ring; the star still sends dense results back.
     */
    @ParameterizedTest
    @EnumSource(value = Target.class, names = {"RING", "STAR", "COMMUNICATOR_RING_AVG"})
    void compressionSendsFewerBytes(Target target) {
        assumeCase(target);
        long dense = bytesSent(target, "none");
        assertTrue(dense > 100_003L * 4, target + ": " + dense + " bytes sent for 400 KB");
        for (String half : new String[] {"fp16", "bf16"}) {
            long bytes = bytesSent(target, half);
            assertTrue(bytes < 0.52 * dense && bytes > 0.48 * dense, target + " " + half + ": " + bytes
                    + " bytes against " + dense + " uncompressed");
        }
        long topk = bytesSent(target, "topk:0.01");
        double most = target == Target.STAR ? 0.55 : 0.05;
        assertTrue(topk < most * dense, target + " topk:0.01: " + topk + " bytes against " + dense + " uncompressed");
    }

    /**
     * In the steady state a compressed call allocates nothing that grows with its size on the
     * calling thread: the scratch buffer, the residual and the selection's state are reused.
     * Measured as the least over a few rounds of calls, as the aggregator suite measures.
     */
    @ParameterizedTest
    @EnumSource(value = Target.class, names = {"RING", "STAR", "COMMUNICATOR_RING_AVG"})
    void compressedCallsAllocateNothingThatGrowsWithTheSize(Target target) {
        Assumptions.assumeTrue(everyCase(), "in the full suite only");
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isThreadAllocatedMemoryEnabled(),
                "per-thread allocation counting is off");
        for (String compression : new String[] {"fp16", "topk:0.1"}) {
            List<Ranks.Outcome<long[]>> outcomes = run(target, 3, same(compression, "65536"), (rank, member) -> {
                long[] perCall = new long[2];
                int[] counts = {256, 1 << 18};
                for (int c = 0; c < counts.length; c++) {
                    INDArray[] input = {Nd4j.rand(DataType.FLOAT, counts[c])};
                    for (int i = 0; i < 20; i++) {
                        member.allReduce(input);
                    }
                    long least = Long.MAX_VALUE;
                    for (int round = 0; round < 3; round++) {
                        long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
                        for (int i = 0; i < 10; i++) {
                            member.allReduce(input);
                        }
                        least = Math.min(least, (threads.getThreadAllocatedBytes(Thread.currentThread().getId())
                                - before) / 10);
                    }
                    perCall[c] = least;
                }
                return perCall;
            });
            for (Ranks.Outcome<long[]> outcome : outcomes) {
                long[] perCall = outcome.valueOrFail();
                System.out.printf("allocation %s %s rank %d: %d B per call of 256 floats, %d B of 262144%n", target,
                        compression, outcome.rank, perCall[0], perCall[1]);
                assertTrue(perCall[1] - perCall[0] <= 1024, target + " " + compression + " on rank " + outcome.rank
                        + ": " + perCall[1] + " bytes per call of 262144 floats, " + perCall[0] + " of 256");
            }
        }
    }

    /**
     * HALF and BFLOAT16 tensors go as they are, beside a FLOAT tensor that is compressed: with topk:0.1
     * their every element is summed (small integers, exact in 16 bits), not a tenth of them.
     */
    @ParameterizedTest
    @EnumSource(value = Target.class, names = {"STAR", "COMMUNICATOR_AUTO_SUM"})
    void halfAndBfloat16TensorsAreNotCompressed(Target target) {
        assumeCase(target);
        int worldSize = target.exactWorldSize();
        List<Ranks.Outcome<double[][]>> outcomes = run(target, worldSize, same("topk:0.1", "64"), (rank, member) ->
                values(member.allReduce(sixteenBitInputs(rank))));
        double[][][] inputs = new double[worldSize][][];
        for (int r = 0; r < worldSize; r++) {
            inputs[r] = values(sixteenBitInputs(r));
        }
        for (Ranks.Outcome<double[][]> outcome : outcomes) {
            double[][] results = outcome.valueOrFail();
            for (int t = 1; t < results.length; t++) {
                for (int i = 0; i < results[t].length; i++) {
                    double sum = 0;
                    for (double[][] rank : inputs) {
                        sum += rank[t][i];
                    }
                    double expected = target.op == ReduceOp.AVG ? sum / worldSize : sum;
                    assertEquals(expected, results[t][i], 0.0, target + ": tensor " + t + " element " + i + " on rank "
                            + outcome.rank);
                }
            }
        }
    }

    /** A FLOAT tensor, then a HALF and a BFLOAT16 one of small integers. */
    private static INDArray[] sixteenBitInputs(int rank) {
        INDArray[] tensors = inputs(2, rank, 5, true);
        return new INDArray[] {tensors[1], tensors[1].castTo(DataType.HALF), tensors[0].castTo(DataType.BFLOAT16)};
    }

    /** With fp16 on, MAX, broadcasts and parameter broadcasts move floats exactly (they are never compressed). */
    @Test
    void otherCollectivesAreNotCompressed() {
        List<Ranks.Outcome<double[][]>> outcomes = run(Target.COMMUNICATOR_AUTO_SUM, 3, same("fp16", "64"),
                (rank, member) -> {
                    INDArray[] tensors = inputs(2, rank, 0, false);
                    Communicator communicator = (Communicator) member.owner;
                    communicator.allReduce(ReduceOp.MAX, tensors);
                    INDArray[] broadcast = inputs(2, rank, 1, false);
                    communicator.broadcast(2, broadcast);
                    return new double[][] {values(tensors)[1], values(broadcast)[1]};
                });
        double[] expectedBroadcast = TensorFixtures.values(inputs(2, 2, 1, false)[1]);
        for (Ranks.Outcome<double[][]> outcome : outcomes) {
            double[][] results = outcome.valueOrFail();
            double[][] inputs = new double[3][];
            for (int r = 0; r < 3; r++) {
                inputs[r] = TensorFixtures.values(inputs(2, r, 0, false)[1]);
            }
            for (int i = 0; i < results[0].length; i++) {
                double max = Math.max(inputs[0][i], Math.max(inputs[1][i], inputs[2][i]));
                assertEquals(max, results[0][i], 0.0, "MAX of element " + i + " on rank " + outcome.rank);
            }
            assertEquals(expectedBroadcast.length, results[1].length);
            for (int i = 0; i < expectedBroadcast.length; i++) {
                assertEquals(expectedBroadcast[i], results[1][i], 0.0, "broadcast element " + i);
            }
        }
        List<Ranks.Outcome<double[]>> params = run(Target.STAR, 3, same("fp16", "64"),
                (rank, member) -> values(((GradientAggregator) member.owner)
                        .broadcastParams(inputs(1, rank, 0, false)))[0]);
        double[] expected = TensorFixtures.values(inputs(1, 0, 0, false)[0]);
        for (Ranks.Outcome<double[]> outcome : params) {
            CollectiveClosedForm.assertBitIdentical(expected, outcome.valueOrFail(), "broadcastParams on rank "
                    + outcome.rank);
        }
    }
}
