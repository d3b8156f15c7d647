package io.ringstar.train.convnet;

import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.inputs.InputType;
import org.deeplearning4j.nn.conf.layers.ConvolutionLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.conf.layers.SubsamplingLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.learning.config.NoOp;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * The small ConvNet of the sources' parameter-server example, as a Deeplearning4j network: a 28×28×1
 * image, a 3×3 convolution to 3 channels (26×26×3, no padding), a 3×3 max-pool with stride 3 (8×8×3),
 * ReLU, and a dense layer from those 192 values to 10 classes with log-softmax, trained on the negative
 * log-likelihood. In DL4J terms:
 * <ul>
 *   <li>the ReLU is the convolution's activation, before the pool rather than after it: ReLU is
 *       monotonic, so the max of ReLUs is the ReLU of the max and the network computes the same function;</li>
 *   <li>log-softmax followed by the negative log-likelihood is DL4J's output layer with the softmax
 *       activation and the {@code NEGATIVELOGLIKELIHOOD} loss (which takes the log of the softmax), so
 *       the loss is the same; {@code output} gives probabilities rather than their logs, and the arg-max
 *       (the predicted class) is the same.</li>
 * </ul>
 * Parameters: 3·(3·3·1) + 3 = 30 for the convolution and 192·10 + 10 = 1,930 for the dense layer,
 * {@value #PARAMETERS} FLOAT values in all. The optimiser is plain SGD: the network's own updater
 * in the synchronous runs ({@link #create}), and the servers' in the asynchronous one, whose workers'
 * networks have DL4J's {@code NoOp} updater ({@link #createForAsyncWorker}), so the three runs of
 * {@code train} differ only in how the gradients are combined.
 */
public final class ConvNet {
    /** Image side in pixels. */
    public static final int SIDE = 28;
    /** Output classes. */
    public static final int CLASSES = 10;
    /** Channels the convolution makes. */
    public static final int CHANNELS = 3;
    /** Number of parameters, all layers: see the class comment. */
    public static final int PARAMETERS = CHANNELS * 3 * 3 + CHANNELS + 192 * CLASSES + CLASSES;

    private ConvNet() {
    }

    /**
     * The network's configuration with weights drawn from {@code seed} (Xavier; biases zero) and
     * {@code updater}. Two networks built from the same seed start with the same parameters.
     */
    public static MultiLayerConfiguration configuration(long seed, IUpdater updater) {
        return new NeuralNetConfiguration.Builder()
                .seed(seed)
                .dataType(DataType.FLOAT)
                .weightInit(WeightInit.XAVIER)
                .updater(updater)
                .list()
                .layer(new ConvolutionLayer.Builder(3, 3).nOut(CHANNELS).stride(1, 1)
                        .activation(Activation.RELU).build())
                .layer(new SubsamplingLayer.Builder(SubsamplingLayer.PoolingType.MAX).kernelSize(3, 3).stride(3, 3)
                        .build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.NEGATIVELOGLIKELIHOOD).nOut(CLASSES)
                        .activation(Activation.SOFTMAX).build())
                // Flat rows of 784 pixels in, as the IDX reader gives them; DL4J reshapes them to 1x28x28.
                .setInputType(InputType.convolutionalFlat(SIDE, SIDE, 1))
                .build();
    }

    /** A new, initialised network that trains with plain SGD at {@code learningRate}. The caller owns it. */
    public static MultiLayerNetwork create(long seed, double learningRate) {
        return create(seed, new Sgd(learningRate));
    }

    /**
     * A new, initialised network with the {@code NoOp} updater, for a worker of the asynchronous parameter
     * server (whose servers apply the SGD). The same starting parameters as {@link #create} from the same seed.
     */
    public static MultiLayerNetwork createForAsyncWorker(long seed) {
        return create(seed, new NoOp());
    }

    private static MultiLayerNetwork create(long seed, IUpdater updater) {
        MultiLayerNetwork network = new MultiLayerNetwork(configuration(seed, updater));
        network.init();
        return network;
    }
}
