package io.ringstar.spark;

import io.ringstar.InvalidConfigException;
import java.util.ArrayList;
import java.util.List;
import org.nd4j.linalg.dataset.DataSet;

/**
 * How the ranks' minibatches make the global steps, evened as {@link io.ringstar.dl4j.DataParallel#shard}
 * evens a source's batches, so that every rank trains on minibatches of one size {@code b} and
 * makes the same number of steps. Every rank works it out alike from the counts of all of them
 * (exchanged by all-gathers), so every rank makes the same decision, the refusal of an empty
 * partition included.
 *
 * <ul>
 *   <li>{@code b} is the smallest, over the ranks, of each rank's largest minibatch: the size every
 *       rank can give.</li>
 *   <li>A minibatch of fewer than {@code b} examples (normally a partition's short last one) is
 *       skipped; one of more gives its first {@code b} examples (the rest is dropped).</li>
 *   <li>Step {@code k} is the {@code k}-th minibatch each rank keeps; the steps of an epoch are as
 *       many as the rank that keeps fewest has, and the surplus of the others is dropped.</li>
 * </ul>
 * So when every partition holds minibatches of one size with perhaps a short last one, step
 * {@code k} is the {@code k}-th minibatch of every partition, as in the class comment of
 * {@link SparkDataParallel}.
 */
final class MinibatchPlan {
    /** What each rank tells the others first: its minibatches, its largest one, its examples. */
    static final int FIRST_COUNTS = 3;

    private final int minibatchSize;
    private final int steps;
    /** Examples each rank read. */
    private final long[] examples;

    private MinibatchPlan(int minibatchSize, int steps, long[] examples) {
        this.minibatchSize = minibatchSize;
        this.steps = steps;
        this.examples = examples;
    }

    /** This rank's first counts: minibatches, examples of its largest, examples in all. */
    static long[] firstCounts(List<DataSet> minibatches) {
        long largest = 0;
        long examples = 0;
        for (DataSet minibatch : minibatches) {
            largest = Math.max(largest, minibatch.numExamples());
            examples += minibatch.numExamples();
        }
        return new long[] {minibatches.size(), largest, examples};
    }

    /**
     * {@code b}, from every rank's {@link #firstCounts} (row r is rank r's).
     *
     * @throws InvalidConfigException naming every partition that holds no example: each is a rank,
     *     and a rank with nothing to train on has no part in any step
     */
    static int minibatchSize(long[][] firstCounts) {
        List<Integer> empty = new ArrayList<>();
        long size = Long.MAX_VALUE;
        for (int rank = 0; rank < firstCounts.length; rank++) {
            if (firstCounts[rank][1] == 0) {
                empty.add(rank);
            }
            size = Math.min(size, firstCounts[rank][1]);
        }
        if (!empty.isEmpty()) {
            String which = empty.size() == 1 ? "partition " + empty.get(0) + " (rank " + empty.get(0) + ")"
                    : "partitions " + empty + " (the ranks of the same numbers)";
            throw new InvalidConfigException("data", which + " of " + firstCounts.length,
                    (empty.size() == 1 ? "holds" : "hold") + " no example; each partition is one rank's part of every"
                    + " step, so every partition needs at least one minibatch: repartition the RDD into fewer,"
                    + " fuller partitions (for example data.repartition(n) with n at most the number of minibatches)");
        }
        if (size > Integer.MAX_VALUE) {
            throw new InvalidConfigException("data", "minibatches of " + size + " examples", "a minibatch holds at"
                    + " most " + Integer.MAX_VALUE + " examples");
        }
        return (int) size;
    }

    /** How many of this rank's minibatches hold at least {@code minibatchSize} examples. */
    static long usable(List<DataSet> minibatches, int minibatchSize) {
        return minibatches.stream().filter(minibatch -> minibatch.numExamples() >= minibatchSize).count();
    }

    /**
     * The plan, from every rank's {@link #firstCounts} and {@link #usable} count (index r is rank r's).
     */
    static MinibatchPlan of(long[][] firstCounts, long[] usable, int minibatchSize) {
        long steps = Long.MAX_VALUE;
        long[] examples = new long[firstCounts.length];
        for (int rank = 0; rank < firstCounts.length; rank++) {
            steps = Math.min(steps, usable[rank]);
            examples[rank] = firstCounts[rank][2];
        }
        // Each rank's largest minibatch holds at least minibatchSize examples, so every rank keeps one.
        return new MinibatchPlan(minibatchSize, (int) Math.min(steps, Integer.MAX_VALUE), examples);
    }

    /**
     * This rank's minibatches of the steps, in order: the first {@link #steps()} of those that hold
     * at least {@link #minibatchSize()} examples, each cut to that size (the first examples, masks
     * included; a view, not a copy, of a longer one; the minibatch itself otherwise).
     */
    List<DataSet> stepsOf(List<DataSet> minibatches) {
        List<DataSet> kept = new ArrayList<>(steps);
        for (DataSet minibatch : minibatches) {
            if (kept.size() == steps) {
                break;
            }
            int size = minibatch.numExamples();
            if (size == minibatchSize) {
                kept.add(minibatch);
            } else if (size > minibatchSize) {
                kept.add((DataSet) minibatch.getRange(0, minibatchSize));
            }
        }
        return kept;
    }

    /** The examples of each rank's minibatch of a step: {@code b}. */
    int minibatchSize() {
        return minibatchSize;
    }

    /** The steps of an epoch. */
    int steps() {
        return steps;
    }

    int ranks() {
        return examples.length;
    }

    /** The examples rank {@code rank} read. */
    long examples(int rank) {
        return examples[rank];
    }

    /** The examples of rank {@code rank} that no step trains on, in every epoch. */
    long dropped(int rank) {
        return examples[rank] - (long) steps * minibatchSize;
    }
}
