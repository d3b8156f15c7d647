package io.ringstar.spark;

import static io.ringstar.dl4j.Dl4jFixtures.floats;
import static io.ringstar.dl4j.Dl4jFixtures.maxAbsDifference;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.InvalidConfigException;
import io.ringstar.checkpoint.CheckpointDirectory;
import io.ringstar.dl4j.Dl4jFixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.Nesterovs;

/**
 * {@link SparkDataParallel} on {@code local[4]}: each partition a rank in this JVM, the ranks
 * meeting over Netty on loopback as they would across executors. The MLP has no batch-dependent
 * layer, so the ranks' training must equal one process fitting, at each step, the concatenation of
 * the partitions' minibatches of that step.
 */
@Timeout(120)
class SparkDataParallelTest {
    private static final double LEARNING_RATE = 0.05;
    /**
     * As in {@code DataParallelEquivalenceTest}: the ranks' average differs from the single process's
     * gradient only in the order of float additions, about one ulp per step; one step on another
     * gradient moves the parameters by about 1e-2.
     */
    private static final double TOLERANCE = 1e-5;
    /** Bounds every collective of a job, so that a test fails within it rather than at the default 5 min. */
    private static final String RANK_TIMEOUT = "60s";
    private static JavaSparkContext spark;

    @BeforeAll
    static void startSpark() {
        spark = LocalSpark.start("local[4]", "SparkDataParallelTest");
    }

    @AfterAll
    static void stopSpark() {
        if (spark != null) {
            spark.stop();
        }
    }

    /** Partition p's minibatches, of the sizes given, each its own data (seeded by partition and index). */
    private static List<List<DataSet>> partitions(int[]... sizes) {
        List<List<DataSet>> partitions = new ArrayList<>();
        for (int p = 0; p < sizes.length; p++) {
            List<DataSet> minibatches = new ArrayList<>();
            for (int i = 0; i < sizes[p].length; i++) {
                minibatches.add(Dl4jFixtures.data(sizes[p][i], Dl4jFixtures.MLP_INPUTS, 1000L * p + i));
            }
            partitions.add(minibatches);
        }
        return partitions;
    }

    private static int[] sizes(int count, int size) {
        int[] sizes = new int[count];
        Arrays.fill(sizes, size);
        return sizes;
    }

    /** An RDD whose partition p holds {@code partitions.get(p)}, in order. */
    private static JavaRDD<DataSet> rdd(List<List<DataSet>> partitions) {
        return spark.parallelize(partitions, partitions.size()).flatMap(List::iterator);
    }

    /**
     * The global batch of each step: the concatenation of the partitions' {@code k}-th minibatches,
     * cut to {@code minibatchSize} examples.
     */
    private static List<DataSet> globalBatches(List<List<DataSet>> partitions, int steps, int minibatchSize) {
        List<DataSet> global = new ArrayList<>();
        for (int k = 0; k < steps; k++) {
            List<DataSet> parts = new ArrayList<>();
            for (List<DataSet> partition : partitions) {
                parts.add((DataSet) partition.get(k).getRange(0, minibatchSize));
            }
            global.add(DataSet.merge(parts));
        }
        return global;
    }

    /** The network both sides start from: trained one step and at epoch 3, so the state sent matters. */
    private static MultiLayerNetwork startedMlp() {
        MultiLayerNetwork net = Dl4jFixtures.mlp(100, new Nesterovs(LEARNING_RATE, 0.9));
        net.fit(Dl4jFixtures.data(8, Dl4jFixtures.MLP_INPUTS, 7));
        net.setEpochCount(3);
        return net;
    }

    private static Map<String, String> options(String... pairs) {
        Map<String, String> options = new HashMap<>();
        options.put("timeout", RANK_TIMEOUT);
        for (int i = 0; i < pairs.length; i += 2) {
            options.put(pairs[i], pairs[i + 1]);
        }
        return options;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ring", "star"})
    void fitEqualsOneProcessOnTheGlobalBatches(String aggregator) {
        int epochs = 2;
        int steps = 5;
        List<List<DataSet>> data = partitions(sizes(steps, 4), sizes(steps, 4), sizes(steps, 4));
        MultiLayerNetwork net = startedMlp();
        INDArray params = net.params();
        INDArray initial = params.dup();
        // The star with two servers: a core option passes through fit to the ranks.
        Map<String, String> options = aggregator.equals("star") ? options("aggregator", "star", "servers", "2")
                : options("aggregator", "ring");

        SparkFitSummary summary = SparkDataParallel.fitWithSummary(net, rdd(data), epochs, options);

        MultiLayerNetwork reference = startedMlp();
        List<Double> referenceLosses = new ArrayList<>();
        for (int epoch = 0; epoch < epochs; epoch++) {
            for (DataSet batch : globalBatches(data, steps, 4)) {
                reference.fit(batch);
                referenceLosses.add(reference.score());
            }
            reference.incrementEpochCount();
        }
        double difference = maxAbsDifference(net.params(), reference.params());
        assertTrue(difference <= TOLERANCE, "parameters differ from one process's by " + difference);
        assertTrue(maxAbsDifference(net.params(), initial) > 100 * TOLERANCE, "the fit trained");
        double stateDifference = maxAbsDifference(net.getUpdater().getStateViewArray(),
                reference.getUpdater().getStateViewArray());
        assertTrue(stateDifference <= TOLERANCE, "the updater state came back: off by " + stateDifference);
        assertEquals(1 + epochs * steps, net.getIterationCount(), "the driver's count went on from 1");
        assertEquals(3 + epochs, net.getEpochCount(), "the driver's epoch count went on from 3");
        assertSame(params, net.params(), "the network's own parameter array, set in place");

        assertTrue(summary.ranksAgree(), "bit-identical on every rank: " + summary.rankDigests());
        assertEquals(RankOutcome.digest(net.params(), net.getUpdater().getStateViewArray()),
                summary.rankDigests().get(0), "the driver holds rank 0's parameters and updater state");
        assertEquals(3, summary.ranks());
        assertEquals(aggregator, summary.aggregator());
        assertEquals(steps, summary.stepsPerEpoch());
        assertEquals(4, summary.minibatchSize());
        assertEquals(epochs * steps, summary.stepsTrained());
        assertEquals(0, summary.droppedPerEpoch());
        assertEquals(0, summary.resumedFromStep());
        assertEquals(epochs, summary.epochLosses().size());
        assertEquals(epochs * steps, summary.stepLosses().size());
        for (int step = 0; step < epochs * steps; step++) {
            // The mean of the ranks' losses on b examples each is the loss of the global batch.
            assertEquals(referenceLosses.get(step), summary.stepLosses().get(step), 1e-4, "the loss of step " + step);
        }
        assertEquals(summary.stepLosses().get(epochs * steps - 1), summary.lastLoss());
        assertTrue(summary.lastLoss() > 0 && summary.describe().contains("the ranks agree"), summary.describe());
    }

    @Test
    void aComputationGraphTrainsAsOneProcess() {
        int steps = 4;
        List<List<DataSet>> data = partitions(sizes(steps, 3), sizes(steps, 3), sizes(steps, 3));
        ComputationGraph net = Dl4jFixtures.mlpGraph(200, new Nesterovs(LEARNING_RATE, 0.9));

        assertSame(net, SparkDataParallel.fit(net, rdd(data), 1, options()));

        ComputationGraph reference = Dl4jFixtures.mlpGraph(200, new Nesterovs(LEARNING_RATE, 0.9));
        for (DataSet batch : globalBatches(data, steps, 3)) {
            reference.fit(batch);
        }
        double difference = maxAbsDifference(net.params(), reference.params());
        assertTrue(difference <= TOLERANCE, "parameters differ from one process's by " + difference);
        assertEquals(steps, net.getIterationCount());
        assertEquals(1, net.getEpochCount());
    }

    @Test
    void unequalMinibatchCountsAndSizesAreEvenedOnEveryRankAlike() {
        // b = min(4, 5, 4) = 4: partition 0's short last minibatch is skipped, partition 1's are cut to 4,
        // and the three steps of partition 0 make the epoch (the surplus of 1 and 2 is dropped).
        List<List<DataSet>> data = partitions(new int[] {4, 4, 4, 3}, sizes(5, 5), sizes(4, 4));
        MultiLayerNetwork net = startedMlp();

        SparkFitSummary summary = SparkDataParallel.fitWithSummary(net, rdd(data), 1, options());

        assertEquals(4, summary.minibatchSize());
        assertEquals(3, summary.stepsPerEpoch());
        assertEquals(List.of(15L, 25L, 16L), summary.examplesByPartition());
        assertEquals(List.of(3L, 13L, 4L), summary.droppedByPartition());
        assertEquals(20, summary.droppedPerEpoch());
        assertEquals(36, summary.examplesPerEpoch());
        assertTrue(summary.describe().contains("36 examples trained and 20 dropped an epoch (partition 0: 3,"
                + " partition 1: 13, partition 2: 4)"), summary.describe());
        assertTrue(summary.ranksAgree());
        MultiLayerNetwork reference = startedMlp();
        for (DataSet batch : globalBatches(data, 3, 4)) {
            reference.fit(batch);
        }
        double difference = maxAbsDifference(net.params(), reference.params());
        assertTrue(difference <= TOLERANCE, "parameters differ from one process's by " + difference);
        assertEquals(1 + 3, net.getIterationCount());
    }

    @Test
    void anEmptyPartitionIsRefusedNamingIt() {
        List<List<DataSet>> data = partitions(sizes(2, 4), sizes(2, 4), sizes(2, 4));
        JavaRDD<DataSet> oneEmpty = rdd(data).mapPartitionsWithIndex(
                (index, minibatches) -> index == 1 ? Collections.emptyIterator() : minibatches, true);
        MultiLayerNetwork net = startedMlp();
        INDArray before = net.params().dup();
        long start = System.nanoTime();

        InvalidConfigException refused = assertThrows(InvalidConfigException.class,
                () -> SparkDataParallel.fit(net, oneEmpty, 1, options()));

        assertTrue(refused.getMessage().contains("partition 1 (rank 1) of 3") && refused.getMessage().contains(
                "no example"), refused.getMessage());
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(30).toNanos(), "refused at once, not by a timeout");
        assertArrayEquals(floats(before), floats(net.params()), "the network is left as it was");
    }

    @Test
    void aResumedFitEndsWithTheParametersOfAnUninterruptedOne(@TempDir Path directory) throws Exception {
        int steps = 5;
        List<List<DataSet>> data = partitions(sizes(steps, 4), sizes(steps, 4), sizes(steps, 4));
        JavaRDD<DataSet> rdd = rdd(data);
        // Adam: its moments and its step count (bias correction) must both come back from the checkpoint.
        MultiLayerNetwork uninterrupted = Dl4jFixtures.mlp(300, new Adam(0.01));
        SparkFitSummary first = SparkDataParallel.fitWithSummary(uninterrupted, rdd, 2,
                options("checkpointDir", directory.toString(), "checkpointEvery", "3"));
        assertEquals(0, first.resumedFromStep());
        CheckpointDirectory checkpoints = new CheckpointDirectory(directory);
        assertEquals(List.of(10L, 9L), checkpoints.steps(), "every 3 steps and after the last; the newest two kept");

        // As if the stage had been lost after step 9: its newest checkpoint is that of step 9.
        Files.delete(checkpoints.pathOf(10));
        MultiLayerNetwork resumed = Dl4jFixtures.mlp(300, new Adam(0.01));
        SparkFitSummary second = SparkDataParallel.fitWithSummary(resumed, rdd, 2,
                options("checkpointDir", directory.toString(), "resume", "true"));

        assertEquals(9, second.resumedFromStep(), second.describe());
        assertEquals(1, second.stepsTrained());
        assertEquals(List.of(first.stepLosses().get(9)), second.stepLosses(), "step 9's loss, as the first run had it");
        assertTrue(second.describe().contains("resumed from step 9 of 10"), second.describe());
        assertArrayEquals(floats(uninterrupted.params()), floats(resumed.params()), "the same final parameters");
        assertArrayEquals(floats(uninterrupted.getUpdater().getStateViewArray()),
                floats(resumed.getUpdater().getStateViewArray()), "the same final updater state");
        assertEquals(uninterrupted.getIterationCount(), resumed.getIterationCount());
        assertEquals(2, resumed.getEpochCount());
    }

    @Test
    void badOptionsAreRefusedOnTheDriver() {
        JavaRDD<DataSet> rdd = rdd(partitions(sizes(1, 4)));
        MultiLayerNetwork net = startedMlp();
        List<Map<String, String>> refusedOptions = List.of(Map.of("aggregator", "tree"),
                Map.of("checkpointDir", "/tmp/x", "checkpointEvery", "0"), Map.of("checkpointEvery", "5"),
                Map.of("resume", "true"), Map.of("checkpointDir", "/tmp/x", "resume", "maybe"),
                Map.of("chunkByts", "1M"));
        for (Map<String, String> options : refusedOptions) {
            String name = options.keySet().stream().filter(key -> !key.equals("checkpointDir")).findFirst()
                    .orElseThrow();
            InvalidConfigException refused = assertThrows(InvalidConfigException.class,
                    () -> SparkDataParallel.fit(net, rdd, 1, options), options.toString());
            assertTrue(refused.getMessage().contains(name), refused.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> SparkDataParallel.fit(net, rdd, 0));
    }
}
