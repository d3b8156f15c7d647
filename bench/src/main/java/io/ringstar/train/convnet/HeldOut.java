package io.ringstar.train.convnet;

import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.train.data.Dataset;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The held-out images of one rank as one ND4J matrix, and the network's accuracy on them. Holds
 * off-heap memory until {@link #close()}; used by one thread.
 */
final class HeldOut implements AutoCloseable {
    private final INDArray features;
    private final int[] labels;

    HeldOut(Dataset data) {
        this.features = data.allFeatures();
        this.labels = data.labels();
    }

    int size() {
        return labels.length;
    }

    /** The share of the held-out images whose most probable class under {@code network} is their label. */
    double accuracy(MultiLayerNetwork network) {
        INDArray probabilities = network.output(features, false);
        INDArray predicted = probabilities.argMax(1);
        int right = 0;
        for (int i = 0; i < labels.length; i++) {
            if (predicted.getInt(i) == labels[i]) {
                right++;
            }
        }
        TensorMemory.close(probabilities, predicted);
        return right / (double) labels.length;
    }

    @Override
    public void close() {
        TensorMemory.close(features);
    }
}
