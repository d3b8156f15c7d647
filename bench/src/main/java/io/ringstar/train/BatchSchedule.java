package io.ringstar.train;

import io.ringstar.train.data.Dataset;
import java.util.Random;

/**
 * The order in which global batches visit the training samples: epoch {@code e} is a
 * permutation drawn from the seed and {@code e}, cut into {@code size / batch} global batches.
 * Not thread-safe (it caches the current epoch); each rank has its own.
 */
final class BatchSchedule {
    private final int size;
    private final int batch;
    private final long seed;
    private final int batchesPerEpoch;
    private int epoch = -1;
    private int[] order;

    BatchSchedule(int size, int batch, long seed) {
        this.size = size;
        this.batch = batch;
        this.seed = seed;
        this.batchesPerEpoch = size / batch;
    }

    /** The permutation that global batch {@code step} is cut from. */
    int[] order(int step) {
        int wanted = step / batchesPerEpoch;
        if (wanted != epoch) {
            epoch = wanted;
            order = Dataset.permutation(size, new Random(seed * 1_000_003L + epoch));
        }
        return order;
    }

    /** Where global batch {@code step} starts in its epoch's permutation. */
    int offset(int step) {
        return (step % batchesPerEpoch) * batch;
    }
}
