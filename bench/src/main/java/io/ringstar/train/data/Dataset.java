package io.ringstar.train.data;

import java.util.Random;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Labelled samples held on the Java heap: {@code features} row by row ({@code size * featureCount}
 * floats) and one class label per sample. Immutable after construction, so the rank threads of one
 * JVM may share one instance; each batch becomes fresh ND4J arrays that belong to the caller.
 */
public final class Dataset {
    private final float[] features;
    private final int[] labels;
    private final int featureCount;
    private final int classCount;

    /**
     * @param features row-major, {@code labels.length * featureCount} values; not copied, must not change
     * @param labels class of each sample, in {@code [0, classCount)}
     */
    Dataset(float[] features, int[] labels, int featureCount, int classCount) {
        if (features.length != (long) labels.length * featureCount) {
            throw new IllegalArgumentException(labels.length + " samples of " + featureCount + " features need "
                    + (long) labels.length * featureCount + " values, not " + features.length);
        }
        for (int i = 0; i < labels.length; i++) {
            if (labels[i] < 0 || labels[i] >= classCount) {
                throw new IllegalArgumentException("sample " + i + ": label " + labels[i] + " is not in [0, "
                        + classCount + ")");
            }
        }
        this.features = features;
        this.labels = labels;
        this.featureCount = featureCount;
        this.classCount = classCount;
    }

    public int size() {
        return labels.length;
    }

    public int featureCount() {
        return featureCount;
    }

    public int classCount() {
        return classCount;
    }

    public int label(int sample) {
        return labels[sample];
    }

    /** Every sample's class, in order: this dataset's own array, not a copy, so callers must not change it. */
    public int[] labels() {
        return labels;
    }

    /** The samples at {@code indices[from, to)}, in that order, as a new dataset. */
    Dataset select(int[] indices, int from, int to) {
        float[] x = new float[(to - from) * featureCount];
        int[] y = new int[to - from];
        for (int i = from; i < to; i++) {
            System.arraycopy(features, indices[i] * featureCount, x, (i - from) * featureCount, featureCount);
            y[i - from] = labels[indices[i]];
        }
        return new Dataset(x, y, featureCount, classCount);
    }

    /** The first {@code count} samples (all of them if there are fewer), in order, as a new dataset. */
    public Dataset first(int count) {
        int[] order = new int[Math.min(count, size())];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        return select(order, 0, order.length);
    }

    /**
     * Splits into held-out and training samples after a shuffle seeded by {@code seed}: the first
     * {@code heldOut} shuffled samples are held out. Every rank that calls this with the same seed
     * gets the same split.
     *
     * @return {training, heldOut}
     * @throws IllegalArgumentException if fewer than {@code heldOut + 1} samples exist
     */
    public Dataset[] split(int heldOut, long seed) {
        if (heldOut >= size()) {
            throw new IllegalArgumentException("--eval-size " + heldOut + " leaves no training samples: the data has "
                    + size() + " samples");
        }
        int[] order = permutation(size(), new Random(seed ^ 0x5DEECE66DL));
        return new Dataset[] {select(order, heldOut, size()), select(order, 0, heldOut)};
    }

    /** A uniformly random permutation of {@code 0..n-1} (Fisher-Yates), reproducible from {@code random}. */
    public static int[] permutation(int n, Random random) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    /** Features of the samples {@code order[from, to)} as a new FLOAT matrix, one row per sample. */
    public INDArray features(int[] order, int from, int to) {
        float[] x = new float[(to - from) * featureCount];
        for (int i = from; i < to; i++) {
            System.arraycopy(features, order[i] * featureCount, x, (i - from) * featureCount, featureCount);
        }
        return Nd4j.create(x, new long[] {to - from, featureCount}, 'c');
    }

    /** One-hot labels of the samples {@code order[from, to)} as a new FLOAT matrix. */
    public INDArray oneHot(int[] order, int from, int to) {
        float[] y = new float[(to - from) * classCount];
        for (int i = from; i < to; i++) {
            y[(i - from) * classCount + labels[order[i]]] = 1f;
        }
        return Nd4j.create(y, new long[] {to - from, classCount}, 'c');
    }

    /** All features as a new FLOAT matrix. */
    public INDArray allFeatures() {
        // Nd4j.create copies the values into its own buffer, and from a float[] it makes a FLOAT array,
        // so neither a clone of the samples nor a cast is needed.
        return Nd4j.create(features, new long[] {size(), featureCount}, 'c');
    }

    /**
     * Standardises every feature to mean 0 and standard deviation 1, with the mean and deviation of
     * {@code reference} (the training part, so the held-out part does not leak into training).
     * Constant features are only centred. Returns a new dataset.
     */
    public Dataset standardisedLike(Dataset reference) {
        double[] mean = new double[featureCount];
        double[] sq = new double[featureCount];
        int n = reference.size();
        for (int i = 0; i < n; i++) {
            for (int f = 0; f < featureCount; f++) {
                double v = reference.features[i * featureCount + f];
                mean[f] += v;
                sq[f] += v * v;
            }
        }
        float[] x = features.clone();
        for (int f = 0; f < featureCount; f++) {
            mean[f] /= n;
            double sd = Math.sqrt(Math.max(0, sq[f] / n - mean[f] * mean[f]));
            double scale = sd > 1e-12 ? 1 / sd : 1;
            for (int i = 0; i < size(); i++) {
                x[i * featureCount + f] = (float) ((x[i * featureCount + f] - mean[f]) * scale);
            }
        }
        return new Dataset(x, labels, featureCount, classCount);
    }
}
