package io.ringstar;

import io.ringstar.internal.engine.CallerResults;
import io.ringstar.internal.tensor.TensorCopy;
import io.ringstar.internal.tensor.TensorLayout;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The aggregator of a job with one rank: the average of one rank's gradients is the gradients
 * themselves, so both calls return copies ({@link #reduceGradientsInto} copies each gradient into
 * its result, or leaves it where it is). Never blocks; needs no transport. Checks its input as
 * the distributed aggregators do, so code tested with it behaves the same with them.
 */
public final class LocalAggregator implements GradientAggregator {
    private final CallerResults callerResults = new CallerResults();
    /** The last layout {@link #reduceGradientsInto} read, kept while the same shapes come back. */
    private TensorLayout lastLayout;
    private boolean closed;

    public LocalAggregator() {
    }

    /**
     * @throws InvalidConfigException if the configuration's world size is not 1
     */
    public LocalAggregator(DistributedConfig config) {
        if (config.worldSize() != 1) {
            throw new InvalidConfigException("worldSize", config.worldSize(), "LocalAggregator serves one rank only");
        }
    }

    /** Always 0: the one rank. */
    @Override
    public int rank() {
        return 0;
    }

    /** Always 1. */
    @Override
    public int worldSize() {
        return 1;
    }

    @Override
    public INDArray[] broadcastParams(INDArray... params) {
        return copies("broadcastParams", params);
    }

    @Override
    public INDArray[] reduceGradients(INDArray... grads) {
        return copies("reduceGradients", grads);
    }

    /**
     * Copies each gradient into its result (nothing for a result that is its gradient), after the
     * checks the distributed aggregators make.
     */
    @Override
    public void reduceGradientsInto(INDArray[] gradients, INDArray[] results) {
        String operation = "reduceGradientsInto";
        checkOpen(operation);
        TensorLayout layout = lastLayout != null && lastLayout.matches(gradients) ? lastLayout
                : TensorLayout.of(operation, 0, gradients, TensorLayout.FLOATING_POINT);
        lastLayout = layout;
        callerResults.check(operation, 0, layout, gradients, results);
        for (int i = 0; i < gradients.length; i++) {
            if (results[i] != gradients[i] && gradients[i].length() > 0) {
                results[i].assign(gradients[i]);
            }
        }
    }

    private void checkOpen(String operation) {
        if (closed) {
            throw new IllegalStateException(operation + ": the aggregator is closed");
        }
    }

    private INDArray[] copies(String operation, INDArray[] tensors) {
        checkOpen(operation);
        TensorLayout.of(operation, 0, tensors, TensorLayout.FLOATING_POINT);
        INDArray[] results = new INDArray[tensors.length];
        for (int i = 0; i < tensors.length; i++) {
            results[i] = TensorCopy.of(tensors[i]);
        }
        return results;
    }

    @Override
    public void close() {
        closed = true;
    }
}
