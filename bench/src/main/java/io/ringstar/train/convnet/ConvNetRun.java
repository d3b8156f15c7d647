package io.ringstar.train.convnet;

import io.ringstar.ranks.Algorithm;

/** The three ways {@code train --model convnet} combines the ranks' gradients, by their command-line names. */
public enum ConvNetRun {
    /** The star ({@link io.ringstar.ParameterServer}), every step in lockstep through DataParallel. */
    PS(Algorithm.PS, false),
    /** The ring ({@link io.ringstar.AllReduceAggregator}), every step in lockstep through DataParallel. */
    RING(Algorithm.RING, false),
    /** The asynchronous parameter server ({@link io.ringstar.AsyncParameterServer}): servers, then workers. */
    ASYNC(Algorithm.PS, true);

    private final Algorithm algorithm;
    private final boolean async;

    ConvNetRun(Algorithm algorithm, boolean async) {
        this.algorithm = algorithm;
        this.async = async;
    }

    /** The aggregator's algorithm (the star for async). */
    public Algorithm algorithm() {
        return algorithm;
    }

    /** Whether the workers go at their own pace. */
    public boolean async() {
        return async;
    }

    /** "ps sync", "ring sync" or "ps async", as the summary lines and the plot's legend say. */
    public String label() {
        return algorithm.label() + (async ? " async" : " sync");
    }
}
