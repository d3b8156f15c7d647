package io.ringstar.dl4j;

import static io.ringstar.dl4j.Dl4jFixtures.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.GradientAggregator;
import io.ringstar.LocalAggregator;
import java.util.function.LongFunction;
import org.deeplearning4j.nn.api.OptimizationAlgorithm;
import org.deeplearning4j.nn.conf.BackpropType;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.LSTM;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.RnnOutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.listeners.ScoreIterationListener;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.ViewIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * {@link DataParallel} in a world of one ({@link LocalAggregator}): averaging over one rank changes
 * nothing, so an attached network trains bit for bit as one that is not, with BatchNormalization
 * and dropout too; and the rules of attaching and detaching.
 */
class DataParallelLocalTest {
    private static final int STEPS = 4;

    /** Trains {@code STEPS} batches of 8 with the RNG seeded per step, attached to a LocalAggregator or not. */
    private static float[] train(LongFunction<MultiLayerNetwork> build, int features, boolean attached) {
        MultiLayerNetwork net = build.apply(7);
        DataSet data = Dl4jFixtures.data(8 * STEPS, features, 11);
        try (GradientAggregator local = new LocalAggregator()) {
            if (attached) {
                DataParallel.attach(net, local);
            }
            ViewIterator batches = new ViewIterator(data, 8);
            for (int step = 0; step < STEPS; step++) {
                Nd4j.getRandom().setSeed(1000 + step);
                net.fit(batches.next());
            }
        }
        assertEquals(STEPS, net.getIterationCount());
        return floats(net.params());
    }

    @Test
    void oneRankTrainsExactlyAsWithoutDataParallel() {
        assertArrayEquals(train(seed -> Dl4jFixtures.mlp(seed, new Adam(0.01)), Dl4jFixtures.MLP_INPUTS, false),
                train(seed -> Dl4jFixtures.mlp(seed, new Adam(0.01)), Dl4jFixtures.MLP_INPUTS, true));
        int pixels = Dl4jFixtures.IMAGE_SIDE * Dl4jFixtures.IMAGE_SIDE;
        float[] plain = train(seed -> Dl4jFixtures.convNet(seed, new Adam(0.01)), pixels, false);
        float[] attached = train(seed -> Dl4jFixtures.convNet(seed, new Adam(0.01)), pixels, true);
        assertArrayEquals(plain, attached);
        float[] initial = floats(Dl4jFixtures.convNet(7, new Adam(0.01)).params());
        assertFalse(java.util.Arrays.equals(initial, attached), "the ConvNet trained");
    }

    @Test
    void fitOfAnIteratorRunsTheEpochCheckAndKeepsOtherListeners() {
        MultiLayerNetwork net = Dl4jFixtures.mlp(3, new Adam(0.01));
        ScoreIterationListener scores = new ScoreIterationListener(1000);
        net.setListeners(scores);
        try (GradientAggregator local = new LocalAggregator()) {
            DataParallel.attach(net, local);
            net.fit(new ViewIterator(Dl4jFixtures.data(24, Dl4jFixtures.MLP_INPUTS, 5), 8), 2);
        }
        assertEquals(6, net.getIterationCount());
        assertEquals(2, net.getEpochCount());
        assertEquals(2, net.getListeners().size());
        assertTrue(net.getListeners().contains(scores));
    }

    @Test
    void attachesOnceAtATimeAndDetachRemovesOnlyItsListener() {
        MultiLayerNetwork net = Dl4jFixtures.mlp(3, new Adam(0.01));
        ScoreIterationListener scores = new ScoreIterationListener(1000);
        net.setListeners(scores);
        try (GradientAggregator local = new LocalAggregator()) {
            DataParallel.attach(net, local);
            assertThrows(IllegalStateException.class, () -> DataParallel.attach(net, local));
            DataParallel.detach(net);
            assertEquals(1, net.getListeners().size());
            assertTrue(net.getListeners().contains(scores));
            DataParallel.detach(net);
            DataParallel.attach(net, local);
            assertEquals(2, net.getListeners().size());
        }
    }

    @Test
    void refusesANetworkWithoutParametersAndANullAggregator() {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().list()
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MSE).nIn(2).nOut(1)
                        .activation(Activation.IDENTITY).build()).build();
        try (GradientAggregator local = new LocalAggregator()) {
            IllegalArgumentException uninitialized = assertThrows(IllegalArgumentException.class,
                    () -> DataParallel.attach(new MultiLayerNetwork(conf), local));
            assertTrue(uninitialized.getMessage().contains("init()"), uninitialized.getMessage());
        }
        assertThrows(IllegalArgumentException.class,
                () -> DataParallel.attach(Dl4jFixtures.mlp(1, new Adam(0.01)), (GradientAggregator) null));
    }

    /** A line search would score each rank's own batch where no listener runs: refused, not left to drift. */
    @Test
    void refusesALineSearchOptimizerAndTruncatedBackprop() {
        MultiLayerConfiguration lbfgs = new NeuralNetConfiguration.Builder()
                .optimizationAlgo(OptimizationAlgorithm.LBFGS).list()
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MSE).nIn(2).nOut(1)
                        .activation(Activation.IDENTITY).build()).build();
        MultiLayerConfiguration truncated = new NeuralNetConfiguration.Builder().list()
                .layer(new LSTM.Builder().nIn(2).nOut(3).build())
                .layer(new RnnOutputLayer.Builder(LossFunctions.LossFunction.MSE).nIn(3).nOut(1)
                        .activation(Activation.IDENTITY).build())
                .backpropType(BackpropType.TruncatedBPTT).tBPTTLength(5).build();
        try (GradientAggregator local = new LocalAggregator()) {
            for (MultiLayerConfiguration conf : new MultiLayerConfiguration[] {lbfgs, truncated}) {
                MultiLayerNetwork net = new MultiLayerNetwork(conf);
                net.init();
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> DataParallel.attach(net, local));
                assertTrue(refused.getMessage().contains(conf == lbfgs ? "LBFGS" : "truncated BPTT"),
                        refused.getMessage());
                assertTrue(net.getListeners() == null || net.getListeners().isEmpty(), "nothing attached");
            }
        }
    }
}
