package io.ringstar.train.convnet;

import io.ringstar.GradientAggregator;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * An aggregator that counts the time its calls to {@link #reduceGradients} take, so that a run
 * through DataParallel can report the share of each step spent communicating. Owns the aggregator
 * it wraps and closes it. Used by one rank's thread.
 */
final class TimedAggregator implements GradientAggregator {
    private final GradientAggregator inner;
    private long reduceNanos;

    TimedAggregator(GradientAggregator inner) {
        this.inner = inner;
    }

    /** Nanoseconds spent in {@link #reduceGradients} so far. */
    long reduceNanos() {
        return reduceNanos;
    }

    @Override
    public int rank() {
        return inner.rank();
    }

    @Override
    public int worldSize() {
        return inner.worldSize();
    }

    @Override
    public INDArray[] broadcastParams(INDArray... params) {
        return inner.broadcastParams(params);
    }

    @Override
    public INDArray[] reduceGradients(INDArray... grads) {
        long start = System.nanoTime();
        try {
            return inner.reduceGradients(grads);
        } finally {
            reduceNanos += System.nanoTime() - start;
        }
    }

    @Override
    public void close() {
        inner.close();
    }
}
