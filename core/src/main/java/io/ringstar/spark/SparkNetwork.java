package io.ringstar.spark;

import io.ringstar.GradientAggregator;
import io.ringstar.dl4j.DataParallel;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;

/**
 * What {@link SparkDataParallel} does with a network, the same way for a {@link MultiLayerNetwork}
 * and a {@link ComputationGraph}: write it for the ranks and read it back there (configuration,
 * parameters, updater state and counters, as DL4J's {@link ModelSerializer} writes them), fit one
 * minibatch, count epochs, attach it to {@link DataParallel}, and read and write its flattened
 * parameters, updater state and counters in place.
 */
abstract class SparkNetwork implements AutoCloseable {
    /** The two kinds of network, for reading one back on a rank. */
    enum Kind {
        LAYERS, GRAPH
    }

    static SparkNetwork of(MultiLayerNetwork net) {
        requireInitialized(net, net != null && net.isInitCalled());
        return new Layers(net);
    }

    static SparkNetwork of(ComputationGraph net) {
        requireInitialized(net, net != null && net.getLayers() != null);
        return new Graph(net);
    }

    private static void requireInitialized(Model net, boolean initialized) {
        if (net == null) {
            throw new IllegalArgumentException("SparkDataParallel.fit: the network is null");
        }
        if (!initialized || net.params() == null) {
            throw new IllegalArgumentException("SparkDataParallel.fit: the network has no parameters yet; call init()"
                    + " first");
        }
    }

    /** The network as {@link ModelSerializer} writes it, with its updater state. */
    final byte[] write() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ModelSerializer.writeModel(model(), bytes, true);
        return bytes.toByteArray();
    }

    /** A network of {@code kind} read from what {@link #write} wrote; the caller closes it. */
    static SparkNetwork read(Kind kind, byte[] written) throws IOException {
        return kind == Kind.LAYERS
                ? new Layers(ModelSerializer.restoreMultiLayerNetwork(new ByteArrayInputStream(written), true))
                : new Graph(ModelSerializer.restoreComputationGraph(new ByteArrayInputStream(written), true));
    }

    abstract Kind kind();

    abstract Model model();

    /** The flattened parameters; written in place. */
    final INDArray params() {
        return model().params();
    }

    /** The updater's flattened state (the updater made if there is none yet), or null for a stateless updater. */
    abstract INDArray updaterState();

    abstract int iterationCount();

    abstract void setIterationCount(int count);

    abstract int epochCount();

    abstract void setEpochCount(int count);

    /** One more epoch done, as the network's own {@code fit(iterator)} counts it at the end of each. */
    abstract void incrementEpochCount();

    /** One step on {@code minibatch}. */
    abstract void fit(DataSet minibatch);

    /** The loss of the last step's minibatch. */
    final double score() {
        return model().score();
    }

    abstract void attach(GradientAggregator aggregator);

    abstract void detach();

    @Override
    public final void close() {
        model().close();
    }

    /** A {@link MultiLayerNetwork}. */
    private static final class Layers extends SparkNetwork {
        private final MultiLayerNetwork net;

        Layers(MultiLayerNetwork net) {
            this.net = net;
        }

        @Override
        Kind kind() {
            return Kind.LAYERS;
        }

        @Override
        Model model() {
            return net;
        }

        @Override
        INDArray updaterState() {
            return net.getUpdater(true).getStateViewArray();
        }

        @Override
        int iterationCount() {
            return net.getIterationCount();
        }

        @Override
        void setIterationCount(int count) {
            net.setIterationCount(count);
        }

        @Override
        int epochCount() {
            return net.getEpochCount();
        }

        @Override
        void setEpochCount(int count) {
            net.setEpochCount(count);
        }

        @Override
        void incrementEpochCount() {
            net.incrementEpochCount();
        }

        @Override
        void fit(DataSet minibatch) {
            net.fit(minibatch);
        }

        @Override
        void attach(GradientAggregator aggregator) {
            DataParallel.attach(net, aggregator);
        }

        @Override
        void detach() {
            DataParallel.detach(net);
        }
    }

    /** A {@link ComputationGraph} of one input and one output, as a {@link DataSet} feeds. */
    private static final class Graph extends SparkNetwork {
        private final ComputationGraph net;

        Graph(ComputationGraph net) {
            this.net = net;
        }

        @Override
        Kind kind() {
            return Kind.GRAPH;
        }

        @Override
        Model model() {
            return net;
        }

        @Override
        INDArray updaterState() {
            return net.getUpdater(true).getStateViewArray();
        }

        @Override
        int iterationCount() {
            return net.getIterationCount();
        }

        @Override
        void setIterationCount(int count) {
            net.getConfiguration().setIterationCount(count);
        }

        @Override
        int epochCount() {
            return net.getEpochCount();
        }

        @Override
        void setEpochCount(int count) {
            net.getConfiguration().setEpochCount(count);
        }

        @Override
        void incrementEpochCount() {
            net.incrementEpochCount();
        }

        @Override
        void fit(DataSet minibatch) {
            net.fit(minibatch);
        }

        @Override
        void attach(GradientAggregator aggregator) {
            DataParallel.attach(net, aggregator);
        }

        @Override
        void detach() {
            DataParallel.detach(net);
        }
    }
}
