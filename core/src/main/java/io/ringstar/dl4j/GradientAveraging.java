package io.ringstar.dl4j;

import io.ringstar.CollectiveException;
import io.ringstar.GradientAggregator;
import io.ringstar.internal.dl4j.TrainedNetwork;
import io.ringstar.internal.tensor.TensorMemory;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The listener {@link DataParallel#attach(org.deeplearning4j.nn.multilayer.MultiLayerNetwork,
 * GradientAggregator)} adds: after each step's gradients are computed and before the updater reads
 * them, it replaces the network's flattened gradients with their average over the ranks; at the end
 * of each epoch of {@code fit(iterator)} it makes the check call that meets a rank still stepping.
 *
 * <p>Each step's call carries, besides the gradients, a marker whose shape is {@code [batch, 0]}
 * for this rank's batch size, and the epoch's check call carries {@value #EPOCH_CHECK_TENSORS}
 * one-element tensors: every call's tensor count and shapes are compared on every rank (the
 * layout's fingerprint in every message), so ranks with different batch sizes, or one at a step
 * while another is at its epoch's end, all fail at once with a
 * {@link io.ringstar.CollectiveMismatchException} instead of averaging unlike things or waiting.
 * The marker is empty, so it holds no bytes and travels in the same collective as the gradients:
 * no round trip, no byte on the wire, and the gradients stay the call's one array with elements,
 * which {@link GradientAggregator#reduceGradientsInto} averages in place where they lie, without
 * a bucket or a result array (an earlier marker of {@code batch} zeros made the aggregator pack
 * both into its bucket, unpack a new result and copy it back: three copies of the gradients per
 * step, now none).
 */
final class GradientAveraging extends BaseTrainingListener {
    /** The tensors of the epoch-end check: more than a step's two, so the two never match. */
    static final int EPOCH_CHECK_TENSORS = 3;
    static final String STEP_ADVICE = "every rank must train with the same batch size and the same number of "
            + "steps (DataParallel.shard gives each rank equal batches)";

    private final TrainedNetwork network;
    private final GradientAggregator aggregator;
    private final int rank;
    /** A step's marker, kept while the batch size and data type stay the same (the usual case). */
    private INDArray marker;
    /** A step's call: the gradients and the marker, refilled each step, so that a step allocates no array. */
    private final INDArray[] step = new INDArray[2];

    GradientAveraging(TrainedNetwork network, GradientAggregator aggregator) {
        this.network = network;
        this.aggregator = aggregator;
        this.rank = aggregator.rank();
    }

    /**
     * Makes the parameters, the updater's state and the step and epoch counters rank 0's, in place:
     * one {@link GradientAggregator#broadcastParams} call.
     */
    void takeRankZerosState() {
        INDArray params = network.params();
        INDArray state = network.updaterState();
        INDArray counters = Nd4j.createFromArray((double) network.iterationCount(), (double) network.epochCount());
        INDArray[] sent = state == null ? new INDArray[] {params, counters} : new INDArray[] {params, counters, state};
        INDArray[] received;
        try {
            received = aggregator.broadcastParams(sent);
        } catch (CollectiveException e) {
            throw StepFailures.restate(e, "DataParallel attach", rank, "every rank must attach the same network "
                    + "(same layers, parameter count and updater)");
        }
        try {
            params.assign(received[0]);
            network.setIterationCount((int) received[1].getDouble(0));
            network.setEpochCount((int) received[1].getDouble(1));
            if (state != null) {
                state.assign(received[2]);
            }
        } finally {
            TensorMemory.close(received);
            TensorMemory.close(counters);
        }
    }

    @Override
    public void onGradientCalculation(Model model) {
        requireOwnNetwork(model);
        INDArray gradients = network.gradients();
        step[0] = gradients;
        step[1] = marker(network.batchSize(), gradients.dataType());
        try {
            // In place: the gradients are the results, and DL4J's updater reads the average from them.
            aggregator.reduceGradientsInto(step, step);
        } catch (CollectiveException e) {
            throw StepFailures.restate(e, "DataParallel step " + network.iterationCount() + " (epoch "
                    + network.epochCount() + ")", rank, "this rank's batch has " + network.batchSize()
                    + " examples; " + STEP_ADVICE);
        } finally {
            // No reference to the network's memory between steps.
            step[0] = null;
        }
    }

    @Override
    public void onEpochEnd(Model model) {
        requireOwnNetwork(model);
        // DL4J calls the step's hook outside its workspaces, but says nothing of this one's: step out.
        MemoryWorkspace outside = Nd4j.getMemoryManager().scopeOutOfWorkspaces();
        try {
            checkEpochEnd();
        } finally {
            outside.close();
        }
    }

    private void checkEpochEnd() {
        INDArray[] check = new INDArray[EPOCH_CHECK_TENSORS];
        for (int i = 0; i < check.length; i++) {
            check[i] = Nd4j.zeros(DataType.FLOAT, 1);
        }
        try {
            aggregator.reduceGradientsInto(check, check);
        } catch (CollectiveException e) {
            // The epoch is counted after its listeners ran; the step count is that of the next step.
            throw StepFailures.restate(e, "DataParallel end of epoch " + network.epochCount() + " at step "
                    + network.iterationCount(), rank, "this rank ended its epoch here, while another was still "
                    + "training or had ended earlier; " + STEP_ADVICE);
        } finally {
            TensorMemory.close(check);
        }
    }

    private INDArray marker(int batchSize, DataType type) {
        if (marker == null || marker.length() != batchSize || marker.dataType() != type) {
            TensorMemory.close(marker);
            // Empty, of shape [batch, 0]: the batch size is in the shape, which every rank compares.
            marker = Nd4j.create(type, batchSize, 0);
        }
        return marker;
    }

    private void requireOwnNetwork(Model model) {
        if (model != network.model()) {
            throw new UnsupportedOperationException("DataParallel: called for a " + model.getClass().getSimpleName()
                    + " other than the attached network (layer-wise pretraining is not supported)");
        }
    }
}
