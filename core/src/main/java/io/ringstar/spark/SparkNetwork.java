package io.ringstar.spark;

import io.ringstar.GradientAggregator;
import io.ringstar.dl4j.DataParallel;
import io.ringstar.internal.dl4j.TrainedNetwork;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;

/**
 * What {@link SparkDataParallel} adds to a {@link TrainedNetwork} (whose parameters, updater state,
 * counters and steps it reads, writes and takes): writing the network for the ranks and reading it
 * back there (configuration, parameters, updater state and counters, as DL4J's {@link
 * ModelSerializer} writes them), attaching it to {@link DataParallel}, and closing a copy read back.
 * A {@link ComputationGraph} must have one input and one output, as a {@code DataSet} feeds.
 */
final class SparkNetwork extends TrainedNetwork implements AutoCloseable {
    private static final String USER = "SparkDataParallel.fit";

    /** The two kinds of network, for reading one back on a rank. */
    enum Kind {
        LAYERS, GRAPH
    }

    private SparkNetwork(MultiLayerNetwork net) {
        super(net, USER);
    }

    private SparkNetwork(ComputationGraph net) {
        super(net, USER);
    }

    static SparkNetwork of(MultiLayerNetwork net) {
        return new SparkNetwork(net);
    }

    static SparkNetwork of(ComputationGraph net) {
        return new SparkNetwork(net);
    }

    /** The network as {@link ModelSerializer} writes it, with its updater state. */
    byte[] write() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ModelSerializer.writeModel(model(), bytes, true);
        return bytes.toByteArray();
    }

    /** A network of {@code kind} read from what {@link #write} wrote; the caller closes it. */
    static SparkNetwork read(Kind kind, byte[] written) throws IOException {
        return kind == Kind.LAYERS
                ? new SparkNetwork(ModelSerializer.restoreMultiLayerNetwork(new ByteArrayInputStream(written), true))
                : new SparkNetwork(ModelSerializer.restoreComputationGraph(new ByteArrayInputStream(written), true));
    }

    Kind kind() {
        return model() instanceof MultiLayerNetwork ? Kind.LAYERS : Kind.GRAPH;
    }

    void attach(GradientAggregator aggregator) {
        use(net -> DataParallel.attach(net, aggregator), net -> DataParallel.attach(net, aggregator));
    }

    void detach() {
        use(DataParallel::detach, DataParallel::detach);
    }

    @Override
    public void close() {
        model().close();
    }
}
