package io.ringstar.dl4j;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.api.OptimizationAlgorithm;
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
 * What {@link DataParallel} reads and writes of a network, the same way for a {@link
 * MultiLayerNetwork} and a {@link ComputationGraph}: the flattened views of its parameters, gradients
 * and updater state (each one array that the layers' own arrays are views of), its counters, and
 * its listeners.
 */
abstract class TrainedNetwork {
    /** The network's flattened parameters; written in place. */
    final INDArray params() {
        return model().params();
    }

    /**
     * The flattened gradients of the last step, which the updater reads next; written in place.
     * (Both network types' {@code getGradientsViewArray} return the array {@code getFlattenedGradients} does.)
     */
    final INDArray gradients() {
        return model().getGradientsViewArray();
    }

    /** The network's updater, made if there is none yet. */
    abstract Updater updater();

    /** The updater's flattened state, or null for an updater without state. */
    INDArray updaterState() {
        return updater().getStateViewArray();
    }

    /**
     * The parameters whose updater is not a {@link NoOp}, each as "layer/parameter: updater"; an
     * updater of a kind this class does not know counts as one such entry.
     */
    List<String> parametersNotUpdatedByNoOp() {
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
    abstract int iterationCount();

    abstract void setIterationCount(int count);

    /** The epochs done so far. */
    abstract int epochCount();

    abstract void setEpochCount(int count);

    /** The number of examples of the current step's batch. */
    final int batchSize() {
        return model().batchSize();
    }

    /** The network's listeners (a copy; never null). */
    abstract Collection<TrainingListener> listeners();

    final void setListeners(Collection<TrainingListener> listeners) {
        model().setListeners(listeners);
    }

    /** The network object itself, to compare with what a listener is called with. */
    abstract Model model();

    void addListener(TrainingListener listener) {
        List<TrainingListener> all = new ArrayList<>(listeners());
        all.add(listener);
        setListeners(all);
    }

    /** Removes every listener of {@code type}; returns whether there was one. */
    boolean removeListeners(Class<? extends TrainingListener> type) {
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
    abstract boolean truncatedBackprop();

    /**
     * Refuses what DataParallel cannot keep in step: an optimizer other than stochastic gradient
     * descent, whose line search scores each rank's own batch outside the averaged step (no listener
     * runs there), so the ranks would choose different step sizes and drift apart unnoticed; and
     * truncated BPTT, whose number of updates per batch follows each rank's sequence length.
     */
    void requireStepwiseTraining(String operation) {
        OptimizationAlgorithm algorithm = model().conf().getOptimizationAlgo();
        if (algorithm != OptimizationAlgorithm.STOCHASTIC_GRADIENT_DESCENT) {
            throw new IllegalArgumentException(operation + ": the network optimizes with " + algorithm
                    + ", whose line search scores each rank's own batch outside the averaged step, so the ranks"
                    + " would drift apart; DataParallel supports STOCHASTIC_GRADIENT_DESCENT (DL4J's default)");
        }
        if (truncatedBackprop()) {
            throw new IllegalArgumentException(operation + ": the network trains with truncated BPTT, which makes"
                    + " one update per segment, so ranks whose sequences differ in length would average unlike"
                    + " steps; use BackpropType.Standard");
        }
    }

    /** Whether a listener of {@code type} is attached. */
    boolean hasListener(Class<? extends TrainingListener> type) {
        return listeners().stream().anyMatch(type::isInstance);
    }

    static TrainedNetwork of(MultiLayerNetwork net) {
        requireInitialized(net, net != null && net.isInitCalled());
        return new Layers(net);
    }

    static TrainedNetwork of(ComputationGraph net) {
        requireInitialized(net, net != null && net.getLayers() != null);
        return new Graph(net);
    }

    private static void requireInitialized(Model net, boolean initialized) {
        if (net == null) {
            throw new IllegalArgumentException("DataParallel: the network is null");
        }
        if (!initialized || net.params() == null) {
            throw new IllegalArgumentException("DataParallel: the network has no parameters yet; call init() first");
        }
    }

    /** A {@link MultiLayerNetwork}. */
    private static final class Layers extends TrainedNetwork {
        private final MultiLayerNetwork net;

        Layers(MultiLayerNetwork net) {
            this.net = net;
        }

        @Override
        Updater updater() {
            return net.getUpdater(true);
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
        Collection<TrainingListener> listeners() {
            return net.getListeners() == null ? List.of() : new ArrayList<>(net.getListeners());
        }

        @Override
        boolean truncatedBackprop() {
            return net.getLayerWiseConfigurations().getBackpropType() == BackpropType.TruncatedBPTT;
        }

        @Override
        Model model() {
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
        Updater updater() {
            return net.getUpdater(true);
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
        Collection<TrainingListener> listeners() {
            return net.getListeners() == null ? List.of() : new ArrayList<>(net.getListeners());
        }

        @Override
        boolean truncatedBackprop() {
            return net.getConfiguration().getBackpropType() == BackpropType.TruncatedBPTT;
        }

        @Override
        Model model() {
            return net;
        }
    }
}
