package io.ringstar.bench;

import io.ringstar.GradientAggregator;
import org.nd4j.linalg.api.ndarray.INDArray;

/** The collectives of {@link GradientAggregator} that the bench times. */
enum Operation {
    /** {@link GradientAggregator#reduceGradients}: all-reduce (average) semantics. */
    REDUCE("reduce"),
    /** {@link GradientAggregator#broadcastParams}: rank 0's values everywhere. */
    BROADCAST("broadcast");

    private final String label;

    Operation(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }

    INDArray[] call(GradientAggregator aggregator, INDArray tensor) {
        return switch (this) {
            case REDUCE -> aggregator.reduceGradients(tensor);
            case BROADCAST -> aggregator.broadcastParams(tensor);
        };
    }

    /**
     * The factor from algorithm bandwidth to bus bandwidth, as nccl-tests defines it: the share of
     * the data that must cross the busiest link of an optimal algorithm, so that numbers measured
     * at different world sizes compare. {@code 2(n-1)/n} for all-reduce, 1 for broadcast.
     */
    double busBandwidthFactor(int worldSize) {
        return switch (this) {
            case REDUCE -> 2.0 * (worldSize - 1) / worldSize;
            case BROADCAST -> 1.0;
        };
    }
}
