package io.ringstar.train.convnet;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;

/**
 * The reporting rank's view of one run: it evaluates the network on the held-out images at the
 * start, every {@code every} steps and after the last, prints a progress line for each, and keeps
 * the accuracy against the training time (evaluation excluded) for the plot. Ranks that do not
 * report make one with {@code out == null}: it only keeps the clock. Used by one thread.
 */
final class Progress {
    private final PrintStream out;
    private final String name;
    private final int steps;
    private final int every;
    /** Whether the lines have the communication column (a Spark run measures no aggregator on the driver). */
    private final boolean comm;
    private final double[] seconds;
    private final double[] accuracy;
    private int points;
    private long start;
    private long evaluationNanos;
    private long windowStart;
    private long windowComm;

    Progress(PrintStream out, String name, int steps, int every) {
        this(out, name, steps, every, true);
    }

    /** As the other constructor; without {@code comm} the lines have no communication column. */
    Progress(PrintStream out, String name, int steps, int every, boolean comm) {
        this.out = out;
        this.name = name;
        this.steps = steps;
        this.every = every;
        this.comm = comm;
        int count = AccuracyCurve.points(steps, every);
        this.seconds = new double[count];
        this.accuracy = new double[count];
    }

    /** Whether this rank reports (prints and measures). */
    boolean reporting() {
        return out != null;
    }

    /** Starts the clock; a reporting rank first measures the starting parameters, at 0 s. */
    void start(MultiLayerNetwork network, HeldOut heldOut) {
        if (out != null) {
            seconds[0] = 0;
            accuracy[0] = heldOut.accuracy(network);
            points = 1;
        }
        start = System.nanoTime();
        windowStart = start;
    }

    /** Training seconds so far: wall time since {@link #start} less the time spent evaluating. */
    double trainingSeconds() {
        return (System.nanoTime() - start - evaluationNanos) / 1e9;
    }

    /** Whether {@link #stepDone} prints a line after step {@code done} (1-based): on a reporting rank, when due. */
    boolean printsAfter(int done) {
        return out != null && (done % every == 0 || done == steps);
    }

    /**
     * After step {@code done} (1-based): counts {@code commNanos} of communication in it and, on a
     * reporting rank, when due, evaluates and prints {@code loss}, the accuracy, the mean step time
     * since the last line, the share of it spent communicating and {@code extra}.
     */
    void stepDone(int done, long commNanos, double loss, MultiLayerNetwork network, HeldOut heldOut, String extra) {
        windowComm += commNanos;
        if (!printsAfter(done)) {
            return;
        }
        long now = System.nanoTime();
        int inWindow = done % every == 0 ? every : done % every;
        double stepMillis = (now - windowStart) / 1e6 / inWindow;
        double commShare = Math.min(1, windowComm / (double) Math.max(1, now - windowStart));
        double trained = (now - start - evaluationNanos) / 1e9;
        double measured = heldOut.accuracy(network);
        seconds[points] = trained;
        accuracy[points] = measured;
        points++;
        int width = Integer.toString(steps).length();
        out.printf(Locale.ROOT, "step %" + width + "d/%d  loss %.4f  held-out acc %5.1f%%  at %5.1f s  step %6.2f ms"
                + "%s%s%n", done, steps, loss, 100 * measured, trained, stepMillis,
                comm ? String.format(Locale.ROOT, "  comm %3.0f%%", 100 * commShare) : "", extra);
        long after = System.nanoTime();
        evaluationNanos += after - now;
        windowStart = after;
        windowComm = 0;
    }

    /** What the reporting rank measured so far. */
    AccuracyCurve curve() {
        return new AccuracyCurve(name, Arrays.copyOf(seconds, points),
                Arrays.copyOf(accuracy, points));
    }

    /** Every point as one array, [seconds..., accuracies...], as long on every rank (zeros where unmeasured). */
    double[] packed() {
        double[] packed = new double[2 * seconds.length];
        System.arraycopy(seconds, 0, packed, 0, seconds.length);
        System.arraycopy(accuracy, 0, packed, seconds.length, accuracy.length);
        return packed;
    }

    /** The curve another rank measured, from its {@link #packed()} values. */
    static AccuracyCurve unpacked(String name, double[] packed) {
        int count = packed.length / 2;
        return new AccuracyCurve(name, Arrays.copyOf(packed, count),
                Arrays.copyOfRange(packed, count, packed.length));
    }
}
