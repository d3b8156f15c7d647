package io.ringstar.transport.inproc.dl4j;

import static io.ringstar.dl4j.Dl4jFixtures.floats;
import static io.ringstar.dl4j.Dl4jFixtures.maxAbsDifference;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.dl4j.DataParallel;
import io.ringstar.dl4j.Dl4jFixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.ViewIterator;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Nesterovs;

/**
 * N ranks training through {@link DataParallel} against one process training on the same global
 * batches: after {@value #STEPS} steps every rank holds bit for bit the same parameters and updater
 * state, and they equal the single process's within {@link #TOLERANCE}, while a single process
 * trained on rank 0's shard alone lies outside it (the negative control, in every case).
 *
 * <p>The MLP's reference fits each global batch of {@code N * b} examples: the mean loss over it
 * has the average of the N shard gradients as its gradient. BatchNormalization (each rank
 * normalizes by its own shard's statistics) and dropout (each rank draws its own masks) make the
 * ConvNet's data-parallel step differ from one step on the global batch even in exact arithmetic;
 * its reference computes, per step, each shard's gradient on a copy of the reference network with
 * the RNG seeded as that rank seeds it for that step, averages them, and lets the reference's own
 * updater apply the average. The ranks seed ND4J's RNG (one per thread) per (step, rank) too.
 *
 * <p>The updater is Nesterov momentum, so the state broadcast at attach and kept equal afterwards
 * matters, and each update is linear in the gradient (Adam's first step, g / |g|, would turn a
 * rounding difference in a gradient near zero into a full step of either sign).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataParallelEquivalenceTest {
    private static final int LOCAL_BATCH = 4;
    private static final int STEPS = 6;
    private static final double LEARNING_RATE = 0.05;
    /**
     * The largest parameter difference from the reference allowed. The ranks' average differs from
     * the reference's only in the order of its float additions (and, for the MLP, BLAS sums N * b
     * rows at once instead of b), a rounding of about one float ulp (6e-8 for values of order 1) per
     * step, which momentum carries over a few steps: measured, at most 6e-8 in every case here. One
     * step of rate 0.05 on another gradient moves parameters by about 1e-2: the negative control
     * differs by 0.08 to 0.37. 1e-5 sits above the first by two orders of magnitude and below the
     * second by four.
     */
    private static final double TOLERANCE = 1e-5;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    /** The two networks. */
    enum Network {
        MLP(Dl4jFixtures.MLP_INPUTS), CONVNET(Dl4jFixtures.IMAGE_SIDE * Dl4jFixtures.IMAGE_SIDE);

        final int features;

        Network(int features) {
            this.features = features;
        }

        MultiLayerNetwork build(long seed) {
            Nesterovs updater = new Nesterovs(LEARNING_RATE, 0.9);
            return this == MLP ? Dl4jFixtures.mlp(seed, updater) : Dl4jFixtures.convNet(seed, updater);
        }
    }

    /** What one rank ends with. */
    record Trained(float[] params, float[] updaterState) {
    }

    /** The seed of ND4J's RNG on rank {@code rank} before step {@code step}. */
    private static long stepSeed(int step, int rank) {
        return 7919L * step + rank + 1;
    }

    @ParameterizedTest(name = "{0}, {1} ranks, {2}")
    @CsvSource({"MLP, 2, STAR", "MLP, 2, RING", "MLP, 3, STAR", "MLP, 3, RING",
        "CONVNET, 2, STAR", "CONVNET, 2, RING", "CONVNET, 3, STAR", "CONVNET, 3, RING"})
    void ranksTrainAsOneProcessOnTheGlobalBatches(Network network, int worldSize, Dl4jRanks.Algorithm algorithm) {
        DataSet data = Dl4jFixtures.data(worldSize * LOCAL_BATCH * STEPS, network.features, 42);
        List<Trained> ranks = Dl4jRanks.runAll(worldSize, algorithm, TIMEOUT, (rank, aggregator) -> {
            MultiLayerNetwork net = network.build(100 + rank);
            DataParallel.attach(net, aggregator);
            DataSetIterator shard = DataParallel.shard(new ViewIterator(data, worldSize * LOCAL_BATCH), rank,
                    worldSize);
            for (int step = 0; step < STEPS; step++) {
                Nd4j.getRandom().setSeed(stepSeed(step, rank));
                net.fit(shard.next());
            }
            assertEquals(STEPS, net.getIterationCount());
            return new Trained(floats(net.params()), floats(net.getUpdater().getStateViewArray()));
        });
        for (int rank = 1; rank < worldSize; rank++) {
            assertArrayEquals(ranks.get(0).params(), ranks.get(rank).params(), "rank " + rank + "'s parameters");
            assertArrayEquals(ranks.get(0).updaterState(), ranks.get(rank).updaterState(),
                    "rank " + rank + "'s updater state");
        }
        INDArray trained = Nd4j.createFromArray(ranks.get(0).params());
        INDArray reference = network == Network.MLP ? globalBatches(network, worldSize, data)
                : averagedShardGradients(network, worldSize, data);
        INDArray shardZeroOnly = shardZeroOnly(network, worldSize, data);
        double difference = maxAbsDifference(trained, reference);
        double controlDifference = maxAbsDifference(trained, shardZeroOnly);
        assertTrue(difference <= TOLERANCE, "parameters differ from the reference by " + difference);
        assertTrue(controlDifference > 100 * TOLERANCE, "training on shard 0 alone differs by only "
                + controlDifference + ": the tolerance would not catch it");
    }

    /** One process fitting each global batch of {@code worldSize * LOCAL_BATCH} examples; starts as rank 0. */
    private static INDArray globalBatches(Network network, int worldSize, DataSet data) {
        MultiLayerNetwork net = network.build(100);
        ViewIterator batches = new ViewIterator(data, worldSize * LOCAL_BATCH);
        for (int step = 0; step < STEPS; step++) {
            net.fit(batches.next());
        }
        return net.params().dup();
    }

    /**
     * One process whose updater applies, at each step, the average of the shards' gradients, each
     * computed on a copy of its parameters with the RNG seeded as that shard's rank seeds it.
     */
    private static INDArray averagedShardGradients(Network network, int worldSize, DataSet data) {
        MultiLayerNetwork net = network.build(100);
        MultiLayerNetwork shardCopy = network.build(100);
        GradientReplacement replacement = new GradientReplacement();
        net.setListeners(replacement);
        List<DataSetIterator> shards = new ArrayList<>();
        for (int rank = 0; rank < worldSize; rank++) {
            shards.add(DataParallel.shard(new ViewIterator(data, worldSize * LOCAL_BATCH), rank, worldSize));
        }
        for (int step = 0; step < STEPS; step++) {
            INDArray sum = null;
            DataSet first = null;
            for (int rank = 0; rank < worldSize; rank++) {
                DataSet shard = shards.get(rank).next();
                first = rank == 0 ? shard : first;
                shardCopy.setParams(net.params());
                shardCopy.setInput(shard.getFeatures());
                shardCopy.setLabels(shard.getLabels());
                Nd4j.getRandom().setSeed(stepSeed(step, rank));
                shardCopy.computeGradientAndScore();
                INDArray gradient = shardCopy.getFlattenedGradients().dup();
                sum = sum == null ? gradient : sum.addi(gradient);
            }
            replacement.next = sum.divi(worldSize);
            net.fit(first);
        }
        return net.params().dup();
    }

    /** The negative control: one process fitting rank 0's shard of each global batch alone. */
    private static INDArray shardZeroOnly(Network network, int worldSize, DataSet data) {
        MultiLayerNetwork net = network.build(100);
        DataSetIterator shard = DataParallel.shard(new ViewIterator(data, worldSize * LOCAL_BATCH), 0, worldSize);
        for (int step = 0; step < STEPS; step++) {
            Nd4j.getRandom().setSeed(stepSeed(step, 0));
            net.fit(shard.next());
        }
        return net.params().dup();
    }

    /** Replaces the network's computed gradients with {@link #next} before its updater runs. */
    private static final class GradientReplacement extends BaseTrainingListener {
        INDArray next;

        @Override
        public void onGradientCalculation(Model model) {
            ((MultiLayerNetwork) model).getFlattenedGradients().assign(next);
        }
    }
}
