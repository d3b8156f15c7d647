package io.ringstar.train.data;

import java.util.Random;

/**
 * The built-in data set, so a training run needs no download: {@code classes} Gaussian clusters in
 * {@code features} dimensions. Each class has a random centre; a sample is its class's centre plus
 * unit Gaussian noise. The centres are drawn with a spread chosen so that neighbouring clusters
 * overlap a little (see {@link #SEPARATION}): a linear model gets most samples right after some
 * training, but not all, and accuracy starts at chance (1 / classes) and climbs visibly. Same seed,
 * same samples, on every rank.
 */
public final class SyntheticData {
    /**
     * Typical distance between two class centres, in noise standard deviations, whatever the
     * feature count: centre coordinates have deviation {@code SEPARATION / sqrt(2 * features)}.
     * At 4.5 a sample falls on the wrong side of a given neighbour's boundary with probability
     * about Phi(-2.25) = 1.2%, so with 9 neighbours a good classifier gets roughly 90% right:
     * learning is visible, and there is headroom to see one run do worse than another.
     */
    static final double SEPARATION = 4.5;

    private SyntheticData() {
    }

    public static Dataset generate(int samples, int features, int classes, long seed) {
        Random random = new Random(seed);
        double[][] centres = new double[classes][features];
        double spread = SEPARATION / Math.sqrt(2.0 * features);
        for (double[] centre : centres) {
            for (int f = 0; f < features; f++) {
                centre[f] = random.nextGaussian() * spread;
            }
        }
        float[] x = new float[samples * features];
        int[] y = new int[samples];
        for (int i = 0; i < samples; i++) {
            int label = random.nextInt(classes);
            y[i] = label;
            for (int f = 0; f < features; f++) {
                x[i * features + f] = (float) (centres[label][f] + random.nextGaussian());
            }
        }
        return new Dataset(x, y, features, classes);
    }
}
