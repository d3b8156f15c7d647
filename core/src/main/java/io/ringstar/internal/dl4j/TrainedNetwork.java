package io.ringstar.internal.dl4j;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.api.NeuralNetwork;
import org.deeplearning4j.nn.api.Updater;
import org.deeplearning4j.nn.conf.BackpropType;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.updater.BaseMultiLayerUpdater;
import org.deeplearning4j.nn.updater.UpdaterBlock;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.learning.config.NoOp;

/**
 * What ringstar reads and writes of a Deeplearning4j network ({@link io.ringstar.dl4j.DataParallel},
 * {@code SparkDataParallel}), the same way for a {@link MultiLayerNetwork} and a {@link
 * ComputationGraph}: the flattened views of its parameters, gradients and updater state (each one
 * array that the layers' own arrays are views of), its counters, its listeners, and one step of its
 * own {@code fit}. Where the two types' methods differ, each method here asks which one it holds.
 *
 * <p>Not final: {@code io.ringstar.spark} adds what is its own (writing the network for its tasks
 * and reading it back there) in a subclass.
 */
public class TrainedNetwork {
    /** A {@link MultiLayerNetwork} or a {@link ComputationGraph}, initialized. */
    private final Model net;

    /**
     * {@code net}, checked to be initialized.
     *
     * @param user the caller, for the exception's message ({@code "DataParallel"})
     * @throws IllegalArgumentException if the network is null or has no parameters yet
     */
    public TrainedNetwork(MultiLayerNetwork net, String user) {
        this(net, net != null && net.isInitCalled(), user);
    }

    /** {@link #TrainedNetwork(MultiLayerNetwork, String)} for a {@link ComputationGraph}. */
    public TrainedNetwork(ComputationGraph net, String user) {
        this(net, net != null && net.getLayers() != null, user);
    }

    private TrainedNetwork(Model net, boolean initialized, String user) {
        if (net == null) {
            throw new IllegalArgumentException(user + ": the network is null");
        }
        if (!initialized || net.params() == null) {
            throw new IllegalArgumentException(user + ": the network has no parameters yet; call init() first");
        }
        this.net = net;
    }

    /** The network object itself, to compare with what a listener is called with. */
    public final Model model() {
        return net;
    }

    /** Gives the network to {@code layers} if it is a {@link MultiLayerNetwork}, else to {@code graph}. */
    public final void use(Consumer<MultiLayerNetwork> layers, Consumer<ComputationGraph> graph) {
        if (net instanceof MultiLayerNetwork multiLayer) {
            layers.accept(multiLayer);
        } else {
            graph.accept(graph());
        }
    }

    private ComputationGraph graph() {
        return (ComputationGraph) net;
    }

    /** The network's flattened parameters; written in place. */
    public final INDArray params() {
        return net.params();
    }

    /**
     * The flattened gradients of the last step, which the updater reads next; written in place.
     * (Both network types' {@code getGradientsViewArray} return the array {@code getFlattenedGradients} does.)
     */
    public final INDArray gradients() {
        return net.getGradientsViewArray();
    }

    /** The network's updater, made if there is none yet. */
    public final Updater updater() {
        return net instanceof MultiLayerNetwork layers ? layers.getUpdater(true) : graph().getUpdater(true);
    }

    /** The updater's flattened state (the updater made if there is none yet), or null for a stateless updater. */
    public final INDArray updaterState() {
        return updater().getStateViewArray();
    }

    /**
     * The parameters whose updater is not a {@link NoOp}, each as "layer/parameter: updater"; an
     * updater of a kind this class does not know counts as one such entry.
     */
    public final List<String> parametersNotUpdatedByNoOp() {
        Updater updater = updater();
        if (!(updater instanceof BaseMultiLayerUpdater<?> layered)) {
            return List.of("(all): " + updater.getClass().getSimpleName());
        }
        List<String> found = new ArrayList<>();
        for (UpdaterBlock block : layered.getUpdaterBlocks()) {
            for (UpdaterBlock.ParamState state : block.getLayersAndVariablesInBlock()) {
                IUpdater kind = state.getLayer().getConfig().getUpdaterByParam(state.getParamName());
                if (!(kind instanceof NoOp)) {
                    found.add(state.getLayer().getConfig().getLayerName() + "/" + state.getParamName() + ": "
                            + (kind == null ? "none" : kind.getClass().getSimpleName()));
                }
            }
        }
        return found;
    }

    /** The iterations (steps) done so far: what schedules and Adam's bias correction count. */
    public final int iterationCount() {
        return net instanceof MultiLayerNetwork layers ? layers.getIterationCount() : graph().getIterationCount();
    }

    public final void setIterationCount(int count) {
        use(layers -> layers.setIterationCount(count), graph -> graph.getConfiguration().setIterationCount(count));
    }

    /** The epochs done so far. */
    public final int epochCount() {
        return net instanceof MultiLayerNetwork layers ? layers.getEpochCount() : graph().getEpochCount();
    }

    public final void setEpochCount(int count) {
        use(layers -> layers.setEpochCount(count), graph -> graph.getConfiguration().setEpochCount(count));
    }

    /** One more epoch done, as the network's own {@code fit(iterator)} counts it at the end of each. */
    public final void incrementEpochCount() {
        use(MultiLayerNetwork::incrementEpochCount, ComputationGraph::incrementEpochCount);
    }

    /** One step of the network's own {@code fit} on {@code minibatch} (a graph's of one input and one output). */
    public final void fit(DataSet minibatch) {
        ((NeuralNetwork) net).fit(minibatch);
    }

    /** The loss of the last step's minibatch. */
    public final double score() {
        return net.score();
    }

    /** The number of examples of the current step's batch. */
    public final int batchSize() {
        return net.batchSize();
    }

    /** Whether the network trains with truncated backpropagation through time (one update per segment). */
    public final boolean truncatedBackprop() {
        BackpropType type = net instanceof MultiLayerNetwork layers
                ? layers.getLayerWiseConfigurations().getBackpropType() : graph().getConfiguration().getBackpropType();
        return type == BackpropType.TruncatedBPTT;
    }

    /** The network's listeners (a copy; never null). */
    public final Collection<TrainingListener> listeners() {
        Collection<TrainingListener> listeners = net instanceof MultiLayerNetwork layers
                ? layers.getListeners() : graph().getListeners();
        return listeners == null ? List.of() : new ArrayList<>(listeners);
    }

    public final void setListeners(Collection<TrainingListener> listeners) {
        net.setListeners(listeners);
    }

    public final void addListener(TrainingListener listener) {
        List<TrainingListener> all = new ArrayList<>(listeners());
        all.add(listener);
        setListeners(all);
    }

    /** Removes every listener of {@code type}; returns whether there was one. */
    public final boolean removeListeners(Class<? extends TrainingListener> type) {
        List<TrainingListener> kept = new ArrayList<>();
        boolean removed = false;
        for (TrainingListener listener : listeners()) {
            if (type.isInstance(listener)) {
                removed = true;
            } else {
                kept.add(listener);
            }
        }
        if (removed) {
            setListeners(kept);
        }
        return removed;
    }

    /** Whether a listener of {@code type} is attached. */
    public final boolean hasListener(Class<? extends TrainingListener> type) {
        return listeners().stream().anyMatch(type::isInstance);
    }
}
