package io.ringstar.spark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;

/**
 * What a {@link SparkDataParallel#fitWithSummary} did: the steps and examples, what was dropped
 * to even the partitions, where a retried stage resumed, the losses, the time, and whether every
 * rank ended with the same parameters. {@link #describe()} gives it as one line.
 *
 * @param ranks the ranks: the RDD's partitions
 * @param aggregator {@code ring} or {@code star}
 * @param epochs the passes over the data
 * @param stepsPerEpoch the steps of each epoch
 * @param minibatchSize the examples of each rank's part of a step
 * @param examplesByPartition the examples each partition held, in rank order
 * @param droppedByPartition of them, those that no step trains on (in every epoch), in rank order
 * @param stageAttempt the attempt of the Spark stage that finished the fit: 0 unless Spark retried it
 * @param resumedFromStep the global step (counted from the fit's start, epochs included) that stage
 *     attempt resumed from: 0 unless it resumed from a checkpoint
 * @param stepsTrained the steps that attempt trained: {@link #totalSteps()} less {@code resumedFromStep}
 * @param lastLoss the loss of the last step trained, averaged over the ranks: the global batch's
 *     loss (before that step's update); NaN if no step was trained
 * @param epochLosses per epoch, the mean loss of its steps that attempt trained (averaged over the
 *     ranks); NaN for an epoch it did not train in
 * @param stepLosses the loss of each step that attempt trained, averaged over the ranks (the
 *     global batch's loss before the step's update); element {@code i} is global step
 *     {@code resumedFromStep + i}, counted from 0
 * @param setupTime rank 0's time from its task's start to its first step: reading its partition,
 *     meeting the other ranks at Spark's barrier, reading the network, joining the group, agreeing on
 *     the steps and, when resuming, reading the checkpoint
 * @param trainingTime rank 0's time in its training loop
 * @param wallTime the whole call on the driver: Spark's stage, reading the data, agreeing, training,
 *     and the results' way back
 * @param rankDigests per rank, a SHA-256 of its final parameters and updater state
 */
public record SparkFitSummary(int ranks, String aggregator, int epochs, int stepsPerEpoch, int minibatchSize,
        List<Long> examplesByPartition, List<Long> droppedByPartition, int stageAttempt, long resumedFromStep,
        long stepsTrained, double lastLoss, List<Double> epochLosses, List<Double> stepLosses, Duration setupTime,
        Duration trainingTime, Duration wallTime, List<String> rankDigests) {

    /** Copies the lists. */
    public SparkFitSummary {
        examplesByPartition = List.copyOf(examplesByPartition);
        droppedByPartition = List.copyOf(droppedByPartition);
        epochLosses = List.copyOf(epochLosses);
        stepLosses = List.copyOf(stepLosses);
        rankDigests = List.copyOf(rankDigests);
    }

    /** From the ranks' outcomes, in rank order. */
    static SparkFitSummary of(String aggregator, int epochs, List<RankOutcome> outcomes, Duration wallTime) {
        RankOutcome zero = outcomes.get(0);
        List<Long> examples = new ArrayList<>();
        List<Long> dropped = new ArrayList<>();
        List<String> digests = new ArrayList<>();
        double[] stepSums = new double[zero.losses().length];
        for (RankOutcome outcome : outcomes) {
            examples.add(outcome.examples());
            dropped.add(outcome.dropped());
            digests.add(outcome.digest());
            for (int i = 0; i < stepSums.length; i++) {
                stepSums[i] += outcome.losses()[i];
            }
        }
        List<Double> stepLosses = new ArrayList<>();
        double[] epochSums = new double[epochs];
        int[] epochCounts = new int[epochs];
        for (int i = 0; i < stepSums.length; i++) {
            double loss = stepSums[i] / outcomes.size();
            stepLosses.add(loss);
            int epoch = (int) ((zero.resumedFromStep() + i) / zero.stepsPerEpoch());
            epochSums[epoch] += loss;
            epochCounts[epoch]++;
        }
        List<Double> epochLosses = new ArrayList<>();
        for (int epoch = 0; epoch < epochs; epoch++) {
            epochLosses.add(epochCounts[epoch] == 0 ? Double.NaN : epochSums[epoch] / epochCounts[epoch]);
        }
        double lastLoss = stepLosses.isEmpty() ? Double.NaN : stepLosses.get(stepLosses.size() - 1);
        return new SparkFitSummary(outcomes.size(), aggregator, epochs, zero.stepsPerEpoch(), zero.minibatchSize(),
                examples, dropped, zero.stageAttempt(), zero.resumedFromStep(), zero.stepsTrained(), lastLoss,
                epochLosses, stepLosses, Duration.ofNanos(zero.setupNanos()), Duration.ofNanos(zero.trainingNanos()),
                wallTime, digests);
    }

    /** The examples of a global step: {@code ranks * minibatchSize}. */
    public long globalBatchSize() {
        return (long) ranks * minibatchSize;
    }

    /** The steps of the whole fit: {@code epochs * stepsPerEpoch}. */
    public long totalSteps() {
        return (long) epochs * stepsPerEpoch;
    }

    /** The examples each epoch trains on: {@code stepsPerEpoch * ranks * minibatchSize}. */
    public long examplesPerEpoch() {
        return stepsPerEpoch * globalBatchSize();
    }

    /** The examples no step trains on, in every epoch: the sum of {@link #droppedByPartition()}. */
    public long droppedPerEpoch() {
        return droppedByPartition.stream().mapToLong(Long::longValue).sum();
    }

    /** {@link #trainingTime()} over {@link #stepsTrained()}; zero if no step was trained. */
    public Duration timePerStep() {
        return stepsTrained == 0 ? Duration.ZERO : trainingTime.dividedBy(stepsTrained);
    }

    /** Whether every rank ended with bit-identical parameters and updater state, as it should. */
    public boolean ranksAgree() {
        return rankDigests.stream().distinct().count() == 1;
    }

    /**
     * One line for a log or a console, for example {@code SparkDataParallel: 3 ranks (ring), 2
     * epochs of 5 steps of 3 x 4 = 12 examples; 60 examples trained and 7 dropped an epoch
     * (partition 0: 3, partition 1: 4); loss 0.5321 at the last step (by epoch: 1.0123, 0.6012);
     * 10 steps in 0.05 s, 5.00 ms a step; set-up 1.80 s; 3.10 s in all; the ranks agree}. A fit that
     * resumed adds {@code resumed from step 9 of 10 (stage attempt 1)}.
     */
    public String describe() {
        StringBuilder line = new StringBuilder("SparkDataParallel: ");
        line.append(ranks).append(ranks == 1 ? " rank (" : " ranks (").append(aggregator).append("), ")
                .append(epochs).append(epochs == 1 ? " epoch of " : " epochs of ").append(stepsPerEpoch)
                .append(stepsPerEpoch == 1 ? " step of " : " steps of ").append(ranks).append(" x ")
                .append(minibatchSize).append(" = ").append(globalBatchSize()).append(" examples; ")
                .append(examplesPerEpoch()).append(" examples trained and ").append(droppedPerEpoch())
                .append(" dropped an epoch");
        StringJoiner dropped = new StringJoiner(", ", " (", ")").setEmptyValue("");
        for (int rank = 0; rank < droppedByPartition.size(); rank++) {
            if (droppedByPartition.get(rank) > 0) {
                dropped.add("partition " + rank + ": " + droppedByPartition.get(rank));
            }
        }
        line.append(dropped);
        if (stageAttempt > 0 || resumedFromStep > 0) {
            line.append("; resumed from step ").append(resumedFromStep).append(" of ").append(totalSteps())
                    .append(" (stage attempt ").append(stageAttempt).append(")");
        }
        line.append(String.format(Locale.ROOT, "; loss %.4f at the last step", lastLoss));
        if (epochs > 1) {
            StringJoiner losses = new StringJoiner(", ", " (by epoch: ", ")");
            epochLosses.forEach(loss -> losses.add(String.format(Locale.ROOT, "%.4f", loss)));
            line.append(losses);
        }
        line.append(String.format(Locale.ROOT, "; %d %s in %.2f s, %.2f ms a step; set-up %.2f s; %.2f s in all; ",
                stepsTrained, stepsTrained == 1 ? "step" : "steps", trainingTime.toNanos() / 1e9,
                timePerStep().toNanos() / 1e6, setupTime.toNanos() / 1e9, wallTime.toNanos() / 1e9));
        line.append(ranksAgree() ? "the ranks agree" : "THE RANKS' PARAMETERS DIFFER (digests " + rankDigests + ")");
        return line.toString();
    }
}
