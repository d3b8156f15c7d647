package io.ringstar;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.StringJoiner;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Overlaps the averaging of gradients with the backward pass that computes them, as PyTorch DDP's
 * buckets and Horovod's tensor fusion do: the gradients are grouped into buckets, and as soon as
 * every gradient of a bucket has been marked ready the bucket's average starts
 * ({@link Communicator#allReduceAsync} with {@link ReduceOp#AVG}, in place), while the backward
 * pass goes on with the next layers. {@link #awaitAll()} waits for every bucket at the end of the
 * step.
 *
 * <p>Gradients are given in the order the backward pass produces them (usually the last layer's
 * first). Buckets are filled in that order: the first up to about {@link #FIRST_BUCKET_BYTES}, so
 * that communication starts early, the others up to the bucket size (default
 * {@link #DEFAULT_BUCKET_BYTES}, as in PyTorch DDP); a gradient larger than a bucket gets one of its
 * own. Buckets start in their order on every rank, whatever order the gradients are marked in (a
 * bucket that is complete waits for the ones before it), so every rank issues the same collectives.
 *
 * <p>A step: {@link #markReady} once for each gradient, then {@link #awaitAll()}; then the next
 * step. The arrays belong to the buckets' collectives from the moment their bucket starts until
 * {@code awaitAll} returns: do not write them in between. Blocks only in {@code awaitAll}, at
 * most the communicator's timeout per bucket. Not thread-safe; does not own the communicator.
 */
public final class GradientBuckets {
    /** The first bucket's size: small, so that the first average starts early in the backward pass. */
    public static final long FIRST_BUCKET_BYTES = 1L << 20;
    /** The other buckets' size unless one is given, PyTorch DDP's default. */
    public static final long DEFAULT_BUCKET_BYTES = 25L << 20;

    private final Communicator communicator;
    private final INDArray[] gradients;
    /** The gradients (indices) of each bucket, in order. */
    private final int[][] members;
    private final int[] bucketOfGradient;
    private final boolean[] ready;
    private final int[] readyCount;
    private final List<CollectiveHandle> started = new ArrayList<>();

    /** Buckets of {@link #DEFAULT_BUCKET_BYTES} after a first of {@link #FIRST_BUCKET_BYTES}. */
    public GradientBuckets(Communicator communicator, INDArray... gradients) {
        this(communicator, DEFAULT_BUCKET_BYTES, gradients);
    }

    /**
     * @param bucketBytes the size of every bucket but the first, positive
     * @throws IllegalArgumentException for a null gradient or a non-positive bucket size
     */
    public GradientBuckets(Communicator communicator, long bucketBytes, INDArray... gradients) {
        if (bucketBytes <= 0) {
            throw new IllegalArgumentException("bucket size must be positive, was " + bucketBytes);
        }
        this.communicator = communicator;
        this.gradients = gradients.clone();
        this.bucketOfGradient = new int[gradients.length];
        this.ready = new boolean[gradients.length];
        List<int[]> buckets = new ArrayList<>();
        List<Integer> current = new ArrayList<>();
        long currentBytes = 0;
        for (int i = 0; i < gradients.length; i++) {
            if (gradients[i] == null) {
                throw new IllegalArgumentException("gradient " + i + " is null");
            }
            long limit = buckets.isEmpty() ? Math.min(FIRST_BUCKET_BYTES, bucketBytes) : bucketBytes;
            long bytes = gradients[i].length() * gradients[i].dataType().width();
            if (!current.isEmpty() && currentBytes + bytes > limit) {
                buckets.add(current.stream().mapToInt(Integer::intValue).toArray());
                current.clear();
                currentBytes = 0;
            }
            current.add(i);
            currentBytes += bytes;
        }
        if (!current.isEmpty()) {
            buckets.add(current.stream().mapToInt(Integer::intValue).toArray());
        }
        this.members = buckets.toArray(new int[0][]);
        this.readyCount = new int[members.length];
        for (int b = 0; b < members.length; b++) {
            for (int gradient : members[b]) {
                bucketOfGradient[gradient] = b;
            }
        }
    }

    /** Number of buckets. */
    public int bucketCount() {
        return members.length;
    }

    /** The bucket that gradient {@code gradientIndex} belongs to. */
    public int bucketOf(int gradientIndex) {
        return bucketOfGradient[gradientIndex];
    }

    /**
     * Marks gradient {@code gradientIndex} as computed for this step; starts its bucket's average
     * if the bucket is now complete, and any complete buckets after it, in order. Never blocks.
     *
     * @throws IllegalStateException if the gradient was already marked in this step
     * @throws IndexOutOfBoundsException for an index that is not a gradient's
     */
    public void markReady(int gradientIndex) {
        if (ready[gradientIndex]) {
            throw new IllegalStateException("gradient " + gradientIndex + " was already marked ready in this step");
        }
        ready[gradientIndex] = true;
        readyCount[bucketOfGradient[gradientIndex]]++;
        // Start every complete bucket whose predecessors have started, in bucket order.
        while (started.size() < members.length && readyCount[started.size()] == members[started.size()].length) {
            int bucket = started.size();
            INDArray[] tensors = new INDArray[members[bucket].length];
            for (int m = 0; m < tensors.length; m++) {
                tensors[m] = gradients[members[bucket][m]];
            }
            started.add(communicator.allReduceAsync(ReduceOp.AVG, tensors));
        }
    }

    /**
     * Waits for every bucket's average, then readies the buckets for the next step. Each wait is
     * bounded by the communicator's timeout from when the bucket started.
     *
     * @throws IllegalStateException naming the gradients not marked ready (their buckets never
     *     started, so the ranks are now out of step: close the communicator)
     * @throws CollectiveException the first failure of a bucket's collective
     */
    public void awaitAll() {
        try {
            for (CollectiveHandle handle : started) {
                handle.await();
            }
            if (started.size() < members.length) {
                StringJoiner missing = new StringJoiner(", ");
                for (int i = 0; i < ready.length; i++) {
                    if (!ready[i]) {
                        missing.add(Integer.toString(i));
                    }
                }
                throw new IllegalStateException("gradients " + missing + " were not marked ready in this step; "
                        + started.size() + " of " + members.length + " buckets started");
            }
        } finally {
            started.clear();
            Arrays.fill(ready, false);
            Arrays.fill(readyCount, 0);
        }
    }
}
