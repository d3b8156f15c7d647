package io.ringstar.internal.dl4j;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.api.Updater;
import org.deeplearning4j.nn.conf.BackpropType;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.updater.BaseMultiLayerUpdater;
import org.deeplearning4j.nn.updater.UpdaterBlock;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.learning.config.NoOp;

/**
 * What ringstar reads and writes of a Deeplearning4j network ({@link io.ringstar.dl4j.DataParallel},
 * {@code SparkDataParallel}), the same way for a {@link MultiLayerNetwork} and a {@link
 * ComputationGraph}: the flattened views of its parameters, gradients and updater state (each one
 * array that the layers' own arrays are views of), its counters, and its listeners.
 */
public abstract class TrainedNetwork {
    /** The network's flattened parameters; written in place. */
    public final INDArray params() {
        return model().params();
    }

    /**
     * The flattened gradients of the last step, which the updater reads next; written in place.
     * (Both network types' {@code getGradientsViewArray} return the array {@code getFlattenedGradients} does.)
     */
    public final INDArray gradients() {
        return model().getGradientsViewArray();
    }

    /** The network's updater, made if there is none yet. */
    public abstract Updater updater();

    /** The updater's flattened state, or null for an updater without state. */
    public INDArray updaterState() {
        return updater().getStateViewArray();
    }

    /**
     * The parameters whose updater is not a {@link NoOp}, each as "layer/parameter: updater"; an
     * updater of a kind this class does not know counts as one such entry.
     */
    public List<String> parametersNotUpdatedByNoOp() {
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
    public abstract int iterationCount();

    public abstract void setIterationCount(int count);

    /** The epochs done so far. */
    public abstract int epochCount();

    public abstract void setEpochCount(int count);

    /** The number of examples of the current step's batch. */
    public final int batchSize() {
        return model().batchSize();
    }

    /** The network's listeners (a copy; never null). */
    public abstract Collection<TrainingListener> listeners();

    public final void setListeners(Collection<TrainingListener> listeners) {
        model().setListeners(listeners);
    }

    /** The network object itself, to compare with what a listener is called with. */
    public abstract Model model();

    public void addListener(TrainingListener listener) {
        List<TrainingListener> all = new ArrayList<>(listeners());
        all.add(listener);
        setListeners(all);
    }

    /** Removes every listener of {@code type}; returns whether there was one. */
    public boolean removeListeners(Class<? extends TrainingListener> type) {
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

    /** Whether the network trains with truncated backpropagation through time (one update per segment). */
    public abstract boolean truncatedBackprop();

    /** Whether a listener of {@code type} is attached. */
    public boolean hasListener(Class<? extends TrainingListener> type) {
        return listeners().stream().anyMatch(type::isInstance);
    }

    /**
     * {@code net}, checked to be initialized.
     *
     * @param user the caller, for the exception's message ({@code "DataParallel"})
     * @throws IllegalArgumentException if the network is null or has no parameters yet
     */
    public static TrainedNetwork of(MultiLayerNetwork net, String user) {
        requireInitialized(net, net != null && net.isInitCalled(), user);
        return new Layers(net);
    }

    /** {@link #of(MultiLayerNetwork, String)} for a {@link ComputationGraph}. */
    public static TrainedNetwork of(ComputationGraph net, String user) {
        requireInitialized(net, net != null && net.getLayers() != null, user);
        return new Graph(net);
    }

    private static void requireInitialized(Model net, boolean initialized, String user) {
        if (net == null) {
            throw new IllegalArgumentException(user + ": the network is null");
        }
        if (!initialized || net.params() == null) {
            throw new IllegalArgumentException(user + ": the network has no parameters yet; call init() first");
        }
    }

    /** A {@link MultiLayerNetwork}. */
    private static final class Layers extends TrainedNetwork {
        private final MultiLayerNetwork net;

        Layers(MultiLayerNetwork net) {
            this.net = net;
        }

        @Override
        public Updater updater() {
            return net.getUpdater(true);
        }

        @Override
        public int iterationCount() {
            return net.getIterationCount();
        }

        @Override
        public void setIterationCount(int count) {
            net.setIterationCount(count);
        }

        @Override
        public int epochCount() {
            return net.getEpochCount();
        }

        @Override
        public void setEpochCount(int count) {
            net.setEpochCount(count);
        }

        @Override
        public Collection<TrainingListener> listeners() {
            return net.getListeners() == null ? List.of() : new ArrayList<>(net.getListeners());
        }

        @Override
        public boolean truncatedBackprop() {
            return net.getLayerWiseConfigurations().getBackpropType() == BackpropType.TruncatedBPTT;
        }

        @Override
        public Model model() {
            return net;
        }
    }

    /** A {@link ComputationGraph}. */
    private static final class Graph extends TrainedNetwork {
        private final ComputationGraph net;

        Graph(ComputationGraph net) {
            this.net = net;
        }

        @Override
        public Updater updater() {
            return net.getUpdater(true);
        }

        @Override
        public int iterationCount() {
            return net.getIterationCount();
        }

        @Override
        public void setIterationCount(int count) {
            net.getConfiguration().setIterationCount(count);
        }

        @Override
        public int epochCount() {
            return net.getEpochCount();
        }

        @Override
        public void setEpochCount(int count) {
            net.getConfiguration().setEpochCount(count);
        }

        @Override
        public Collection<TrainingListener> listeners() {
            return net.getListeners() == null ? List.of() : new ArrayList<>(net.getListeners());
        }

        @Override
        public boolean truncatedBackprop() {
            return net.getConfiguration().getBackpropType() == BackpropType.TruncatedBPTT;
        }

        @Override
        public Model model() {
            return net;
        }
    }
}
