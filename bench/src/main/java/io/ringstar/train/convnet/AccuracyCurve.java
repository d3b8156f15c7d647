package io.ringstar.train.convnet;

/**
 * Held-out accuracy of one run against its wall-clock time: point {@code i} is the accuracy
 * {@code accuracy[i]} (in [0, 1]) measured {@code seconds[i]} into the training, the time spent
 * evaluating excluded.
 *
 * @param name the run's label, the plot's legend
 * @param seconds training seconds at each evaluation, the first 0 (the starting parameters)
 * @param accuracy held-out accuracy at each evaluation
 */
public record AccuracyCurve(String name, double[] seconds, double[] accuracy) {
    public AccuracyCurve {
        if (seconds.length != accuracy.length) {
            throw new IllegalArgumentException(seconds.length + " times but " + accuracy.length + " accuracies");
        }
    }

    /** The evaluations of a run of {@code steps}: at the start, every {@code every} steps and after the last. */
    static int points(int steps, int every) {
        return 1 + (steps + every - 1) / every;
    }
}
