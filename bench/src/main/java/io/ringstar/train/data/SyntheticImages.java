package io.ringstar.train.data;

import java.util.Random;

/**
 * Built-in images for the ConvNet when Fashion-MNIST is not installed: 28×28 grey images in 10
 * classes, pixels in {@code [0, 1]} as the IDX reader gives them. Each class has a prototype of
 * three soft blobs at places drawn from the seed; an image is its class's prototype moved by up to
 * {@value #MAX_SHIFT} pixels each way, with Gaussian pixel noise. The shift is what a convolution
 * and a pool are good at, so the ConvNet learns them visibly (from chance to well above it) in a
 * few hundred steps. Same seed, same images, on every rank.
 */
public final class SyntheticImages {
    /** Image side in pixels. */
    public static final int SIDE = 28;
    /** Classes. */
    public static final int CLASSES = 10;
    static final int MAX_SHIFT = 2;
    private static final int BLOBS = 3;
    private static final double NOISE = 0.25;

    private SyntheticImages() {
    }

    /**
     * {@code count} images with labels; the prototypes depend on {@code seed} alone and the images on
     * {@code seed} and {@code stream}, so a training set and a held-out set drawn with two streams of one
     * seed share their classes but no image.
     */
    public static Dataset generate(int count, long seed, long stream) {
        float[][] prototypes = prototypes(new Random(seed));
        Random random = new Random(seed * 1_000_003L + stream);
        int pixels = SIDE * SIDE;
        float[] x = new float[count * pixels];
        int[] y = new int[count];
        for (int i = 0; i < count; i++) {
            int label = random.nextInt(CLASSES);
            y[i] = label;
            int dx = random.nextInt(2 * MAX_SHIFT + 1) - MAX_SHIFT;
            int dy = random.nextInt(2 * MAX_SHIFT + 1) - MAX_SHIFT;
            for (int row = 0; row < SIDE; row++) {
                for (int col = 0; col < SIDE; col++) {
                    int fromRow = row - dy;
                    int fromCol = col - dx;
                    double value = fromRow >= 0 && fromRow < SIDE && fromCol >= 0 && fromCol < SIDE
                            ? prototypes[label][fromRow * SIDE + fromCol] : 0;
                    value += NOISE * random.nextGaussian();
                    x[i * pixels + row * SIDE + col] = (float) Math.min(1, Math.max(0, value));
                }
            }
        }
        return new Dataset(x, y, pixels, CLASSES);
    }

    /** Each class: the sum of a few Gaussian blobs of random centre and width, clipped to 1. */
    private static float[][] prototypes(Random random) {
        float[][] prototypes = new float[CLASSES][SIDE * SIDE];
        for (float[] prototype : prototypes) {
            for (int blob = 0; blob < BLOBS; blob++) {
                double centreRow = 4 + random.nextDouble() * (SIDE - 8);
                double centreCol = 4 + random.nextDouble() * (SIDE - 8);
                double width = 1.5 + random.nextDouble() * 2.5;
                for (int row = 0; row < SIDE; row++) {
                    for (int col = 0; col < SIDE; col++) {
                        double distance = (row - centreRow) * (row - centreRow) + (col - centreCol) * (col - centreCol);
                        prototype[row * SIDE + col] += (float) Math.exp(-distance / (2 * width * width));
                    }
                }
            }
            for (int i = 0; i < prototype.length; i++) {
                prototype[i] = Math.min(1, prototype[i]);
            }
        }
        return prototypes;
    }
}
