package io.ringstar.train;

import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientBuckets;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.observe.CollectiveStatistics;
import io.ringstar.train.model.Network;
import io.ringstar.transport.inproc.InProcessTransport;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One rank's gradients for {@code train --overlap}: the loss and the gradients live in arrays made
 * once, grouped into {@link GradientBuckets} in the order the backward pass produces them (the loss
 * first, as the forward pass ends, then the last layer's gradients); each is marked ready the moment
 * it is computed, so a bucket's average runs on the {@link Communicator}'s thread while the backward
 * pass computes the earlier layers. {@link #step} waits for every bucket and returns the averages.
 */
final class OverlappedStep implements AutoCloseable {
    private final Network network;
    private final Communicator communicator;
    private final INDArray loss = Nd4j.zeros(DataType.DOUBLE, 1);
    private final INDArray[] gradients;
    private final GradientBuckets buckets;
    /** For each parameter, its gradient's index among the buckets' arrays. */
    private final int[] bucketIndex;
    private long computeNanos;
    private long waitNanos;

    /**
     * @param transport borrowed, not closed here; {@code null} at world size 1, where the
     *     communicator gets a group of one in this process
     */
    OverlappedStep(Network network, DistributedConfig config, Transport transport, long bucketBytes) {
        this.network = network;
        Transport lent = transport == null ? InProcessTransport.createGroup(1, config.timeout()).get(0)
                : Transports.borrowed(transport);
        this.communicator = new Communicator(config, lent);
        long[][] shapes = network.shapes();
        gradients = new INDArray[shapes.length];
        for (int i = 0; i < shapes.length; i++) {
            gradients[i] = Nd4j.zeros(DataType.FLOAT, shapes[i]);
        }
        int[] order = network.backwardOrder();
        INDArray[] inBackwardOrder = new INDArray[order.length + 1];
        bucketIndex = new int[order.length];
        inBackwardOrder[0] = loss;
        for (int k = 0; k < order.length; k++) {
            inBackwardOrder[k + 1] = gradients[order[k]];
            bucketIndex[order[k]] = k + 1;
        }
        buckets = new GradientBuckets(communicator, bucketBytes, inBackwardOrder);
    }

    int bucketCount() {
        return buckets.bucketCount();
    }

    /**
     * This rank's forward and backward pass on {@code x}, {@code y}, averaged across the ranks as it
     * goes: returns the average loss; {@link #gradients()} then hold the average gradients until
     * the next step. Blocks at most the communicator's timeout per bucket.
     */
    double step(INDArray[] params, INDArray x, INDArray y) {
        long start = System.nanoTime();
        network.lossAndGradients(params, x, y, new Network.Sink() {
            @Override
            public void loss(double value) {
                loss.putScalar(0, value);
                buckets.markReady(0);
            }

            @Override
            public void gradient(int index, INDArray gradient) {
                gradients[index].assign(gradient);
                gradient.close();
                buckets.markReady(bucketIndex[index]);
            }
        });
        long computed = System.nanoTime();
        buckets.awaitAll();
        waitNanos = System.nanoTime() - computed;
        computeNanos = computed - start;
        return loss.getDouble(0);
    }

    /** The average gradients of the last step, in parameter order; this object owns them. */
    INDArray[] gradients() {
        return gradients;
    }

    /** How long the last step's forward and backward pass took, with the buckets' averages running beside it. */
    long computeNanos() {
        return computeNanos;
    }

    /** The communicator's statistics: its all-reduces, one per bucket and step. */
    CollectiveStatistics statistics() {
        return communicator.collectiveStatistics();
    }

    /** How long the last step waited in {@link GradientBuckets#awaitAll()}: the communication not hidden. */
    long waitNanos() {
        return waitNanos;
    }

    @Override
    public void close() {
        communicator.close();
        TensorMemory.close(gradients);
        loss.close();
    }
}
