package io.ringstar.dl4j;

import java.util.Random;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.BatchNormalization;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * Small networks and data for the tests of {@link DataParallel}, here and in the transports' tests
 * (through core's test-jar): networks of a few hundred parameters, so that a step costs
 * milliseconds, built from a seed so that the same seed gives the same initial parameters.
 */
public final class Dl4jFixtures {
    /** Features of the MLP. */
    public static final int MLP_INPUTS = 6;
    /** Side of the ConvNet's square one-channel images, given flat. */
    public static final int IMAGE_SIDE = 6;
    /** Classes of both networks. */
    public static final int CLASSES = 3;

    private Dl4jFixtures() {
    }

    /** 6 inputs, a dense layer of 10 (tanh), softmax over 3 classes; L2 0.0001. */
    public static MultiLayerNetwork mlp(long seed, IUpdater updater) {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(seed).updater(updater).l2(1e-4)
                .list()
                .layer(new DenseLayer.Builder().nIn(MLP_INPUTS).nOut(10).activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(10).nOut(CLASSES)
                        .activation(Activation.SOFTMAX).build())
                .build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /** The MLP of {@link #mlp} as a {@link ComputationGraph}. */
    public static ComputationGraph mlpGraph(long seed, IUpdater updater) {
        ComputationGraphConfiguration conf = new NeuralNetConfiguration.Builder().seed(seed).updater(updater).l2(1e-4)
                .graphBuilder().addInputs("in")
                .addLayer("hidden", new DenseLayer.Builder().nIn(MLP_INPUTS).nOut(10).activation(Activation.TANH)
                        .build(), "in")
                .addLayer("out", new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(10).nOut(CLASSES)
                        .activation(Activation.SOFTMAX).build(), "hidden")
                .setOutputs("out").build();
        ComputationGraph net = new ComputationGraph(conf);
        net.init();
        return net;
    }

    /**
     * A ConvNet on 6x6 one-channel images given flat: 3x3 convolution to 3 channels, batch
     * normalization, ReLU, 2x2 max-pool, a dense layer of 8 (ReLU) with dropout (keeps 3 in 4 of its
     * inputs), softmax over 3 classes.
     */
    public static MultiLayerNetwork convNet(long seed, IUpdater updater) {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(seed).updater(updater).list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(3).activation(Activation.IDENTITY).build())
                .layer(new BatchNormalization.Builder().activation(Activation.RELU).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(2, 2).stride(2, 2)
                        .build())
                .layer(new DenseLayer.Builder().nOut(8).activation(Activation.RELU).dropOut(0.75).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nOut(CLASSES)
                        .activation(Activation.SOFTMAX).build())
                .setInputType(InputType.convolutionalFlat(IMAGE_SIDE, IMAGE_SIDE, 1))
                .build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    /**
     * {@code examples} examples of {@code features} values uniform in [-1, 1) and a one-hot label of
     * {@value #CLASSES} classes that depends on the features (so training has something to learn),
     * from {@code seed}. FLOAT.
     */
    public static DataSet data(int examples, int features, long seed) {
        Random random = new Random(seed);
        float[][] x = new float[examples][features];
        float[][] y = new float[examples][CLASSES];
        for (int i = 0; i < examples; i++) {
            float sum = 0;
            for (int j = 0; j < features; j++) {
                x[i][j] = 2 * random.nextFloat() - 1;
                sum += x[i][j] * (j % 2 == 0 ? 1 : -0.5f);
            }
            int label = sum < -0.3f ? 0 : sum < 0.3f ? 1 : 2;
            y[i][label] = 1;
        }
        return new DataSet(Nd4j.createFromArray(x), Nd4j.createFromArray(y));
    }

    /** The largest absolute difference between the elements of two arrays of the same length. */
    public static double maxAbsDifference(INDArray a, INDArray b) {
        double[] x = values(a);
        double[] y = values(b);
        if (x.length != y.length) {
            throw new AssertionError("lengths differ: " + x.length + " and " + y.length);
        }
        double largest = 0;
        for (int i = 0; i < x.length; i++) {
            largest = Math.max(largest, Math.abs(x[i] - y[i]));
        }
        return largest;
    }

    /** The elements of {@code array} in 'c' order, as doubles. */
    public static double[] values(INDArray array) {
        return array.castTo(DataType.DOUBLE).reshape(array.length()).toDoubleVector();
    }

    /** The elements of a FLOAT {@code array} in 'c' order: what tests compare bit for bit. */
    public static float[] floats(INDArray array) {
        return array.reshape(array.length()).toFloatVector();
    }
}
