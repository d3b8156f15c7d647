package io.ringstar.train;

import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.GradientBuckets;
import io.ringstar.LocalAggregator;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.config.ByteSize;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.ranks.Algorithm;
import io.ringstar.train.data.Dataset;
import io.ringstar.train.model.Network;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One rank's synchronous training (see {@link Trainer} for the scheme): every step, each rank's
 * shard of the global batch, one {@link GradientAggregator#reduceGradients} call for the gradients
 * and the loss (or, with {@code --overlap}, {@link OverlappedStep}'s buckets averaged during the
 * backward pass), the same update on every rank; rank 0 reports progress and writes checkpoints.
 */
final class SyncTraining {
    private final TrainSettings settings;
    private final Algorithm algorithm;
    private final Network network;
    private final Dataset train;
    private final Dataset heldOut;
    private final DistributedConfig config;
    private final Transport transport;
    private final PrintStream out;
    private final Trainer.StepHook hook;
    private final TrainingCheckpoints checkpoints;
    private final OverlapSettings overlap;

    /** @param transport lent for the run: it stays open when the run ends */
    SyncTraining(TrainSettings settings, Algorithm algorithm, Network network, Dataset train, Dataset heldOut,
            DistributedConfig config, Transport transport, PrintStream out, Trainer.StepHook hook,
            TrainingCheckpoints checkpoints, OverlapSettings overlap) {
        this.settings = settings;
        this.algorithm = algorithm;
        this.network = network;
        this.train = train;
        this.heldOut = heldOut;
        this.config = config;
        this.transport = transport;
        this.out = out;
        this.hook = hook;
        this.checkpoints = checkpoints;
        this.overlap = overlap;
    }

    /** Trains on this rank until the last step and returns its summary and final parameters. */
    Trainer.Outcome run() {
        int rank = config.rank();
        int world = config.worldSize();
        int shard = settings.batchSize() / world;
        BatchSchedule schedule = new BatchSchedule(train.size(), settings.batchSize(), settings.seed());
        INDArray heldOutX = rank == 0 ? heldOut.allFeatures() : null;
        int[] heldOutLabels = heldOut.labels();
        float[] curve = new float[settings.steps()];
        INDArray[] params = null;
        try (GradientAggregator aggregator = aggregator();
                OverlappedStep overlapped = overlap.enabled() ? new OverlappedStep(network, config, transport,
                        overlap.bucketBytes()) : null) {
            if (overlapped != null && rank == 0) {
                out.printf(Locale.ROOT, "overlap: %d bucket%s (the first up to %s, then %s each), averaged by the"
                        + " Communicator during the backward pass; comm %% = waiting for them after it%n",
                        overlapped.bucketCount(), overlapped.bucketCount() == 1 ? "" : "s",
                        ByteSize.format(GradientBuckets.FIRST_BUCKET_BYTES), ByteSize.format(overlap.bucketBytes()));
            }
            long start = System.nanoTime();
            Start begin = startingPoint(rank, world, network, aggregator, curve);
            params = begin.params();
            int firstStep = begin.step();
            // The calls' own figures come from the statistics, read at each progress line; the step, the
            // backward pass and overlap's wait for the buckets are nobody's statistics, so they are timed here.
            CollectiveWindow collective = overlapped != null
                    ? new CollectiveWindow(overlapped::statistics, CollectiveWindow.ALL_REDUCE)
                    : new CollectiveWindow(aggregator::collectiveStatistics, CollectiveWindow.REDUCE_GRADIENTS);
            long overlapWaitNanos = 0;
            long stepNanos = 0;
            long windowOverlapWait = 0;
            long windowStep = 0;
            long windowBackward = 0;
            // Rank 0's progress line at the last step (it always prints one) measures the final
            // parameters; the summary reuses that value instead of evaluating them a second time.
            double lastStepAccuracy = Double.NaN;
            for (int step = firstStep; step < settings.steps(); step++) {
                Trainer.callHook(hook, rank, step);
                long stepStart = System.nanoTime();
                int[] order = schedule.order(step);
                int from = schedule.offset(step) + rank * shard;
                INDArray x = train.features(order, from, from + shard);
                INDArray y = train.oneHot(order, from, from + shard);
                if (overlapped != null) {
                    curve[step] = (float) overlapped.step(params, x, y);
                    TensorMemory.close(x, y);
                    overlapWaitNanos += overlapped.waitNanos();
                    windowOverlapWait += overlapped.waitNanos();
                    windowBackward += overlapped.computeNanos();
                    INDArray[] averaged = overlapped.gradients();
                    for (int i = 0; i < params.length; i++) {
                        // The gradients' arrays are the buckets' own: the next step overwrites them.
                        params[i].subi(averaged[i].muli(settings.learningRate()));
                    }
                } else {
                    Network.LossAndGradients result = network.lossAndGradients(params, x, y);
                    TensorMemory.close(x, y);
                    INDArray[] outgoing = new INDArray[params.length + 1];
                    System.arraycopy(result.gradients(), 0, outgoing, 0, params.length);
                    outgoing[params.length] = Nd4j.scalar(result.loss());
                    INDArray[] averaged = aggregator.reduceGradients(outgoing);
                    TensorMemory.close(outgoing);
                    for (int i = 0; i < params.length; i++) {
                        params[i].subi(averaged[i].muli(settings.learningRate()));
                    }
                    curve[step] = (float) averaged[params.length].getDouble(0);
                    TensorMemory.close(averaged);
                }
                long took = System.nanoTime() - stepStart;
                stepNanos += took;
                windowStep += took;
                boolean last = step + 1 == settings.steps();
                if (rank == 0 && checkpoints.due(step + 1)) {
                    // After the step's timing: the other ranks wait for this in the next step's reduce.
                    saveCheckpoint(step + 1, network, params, curve, world);
                }
                if (rank == 0 && ((step + 1) % settings.logEvery() == 0 || last)) {
                    int stepsInWindow = Math.min(step % settings.logEvery(), step - firstStep) + 1;
                    double accuracy = network.accuracy(params, heldOutX, heldOutLabels);
                    if (last) {
                        lastStepAccuracy = accuracy;
                    }
                    CollectiveWindow.Figures figures = collective.next();
                    // comm: the reduceGradients calls' time; with overlap, the wait for the buckets after the
                    // backward pass, as their all-reduces run beside it.
                    long comm = overlapped == null ? figures.nanos() : windowOverlapWait;
                    String backward = overlapped == null ? "" : String.format(Locale.ROOT, "  forward+backward %.2f ms",
                            windowBackward / 1e6 / stepsInWindow);
                    Trainer.printProgress(out, step + 1, settings.steps(), curve[step], accuracy,
                            windowStep / 1e6 / stepsInWindow, Trainer.share(comm, windowStep),
                            figures.describe() + backward);
                    windowBackward = 0;
                    windowOverlapWait = 0;
                    windowStep = 0;
                }
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            double accuracy = lastStepAccuracy;
            if (Double.isNaN(accuracy)) {
                // A rank other than 0 printed no progress, so it measures its final parameters here.
                INDArray x = heldOut.allFeatures();
                accuracy = network.accuracy(params, x, heldOutLabels);
                TensorMemory.close(x);
            }
            float[][] values = Trainer.toFloats(params);
            long commNanos = overlapped != null ? overlapWaitNanos
                    : CollectiveWindow.totalNanos(aggregator.collectiveStatistics(), CollectiveWindow.REDUCE_GRADIENTS);
            TrainSummary summary = new TrainSummary(settings.steps(), curve[curve.length - 1], accuracy,
                    elapsed, Trainer.share(commNanos, stepNanos), curve, heldOut.size(),
                    overlap.enabled() ? "comm" : algorithm.label(), overlap.enabled() ? "sync overlap" : "sync",
                    world,
                    -1, -1, -1, TrainSummary.digest(values), firstStep);
            if (rank == 0) {
                out.println(summary.describe(settings.model().label()));
            }
            return new Trainer.Outcome(summary, values);
        } finally {
            TensorMemory.close(heldOutX);
            if (params != null) {
                TensorMemory.close(params);
            }
        }
    }

    /** Where a synchronous run starts: the parameters, the same on every rank, and the first step to take. */
    private record Start(INDArray[] params, int step) {
    }

    /**
     * Rank 0's starting point on every rank: the checkpoint's parameters and step when resuming,
     * else fresh parameters from the seed at step 0. Only rank 0 reads the checkpoint; the
     * parameters and the step (a DOUBLE scalar, exact far beyond any step count) go out in one
     * {@link GradientAggregator#broadcastParams} call, then the loss curve so far in a second one,
     * whose length the other ranks know from the step. {@code curve} gets that curve.
     */
    private Start startingPoint(int rank, int world, Network network, GradientAggregator aggregator, float[] curve) {
        Optional<Checkpoint> point = rank == 0 ? checkpoints.takeResumePoint(world, network) : Optional.empty();
        String[] names = network.parameterNames();
        long[][] shapes = network.shapes();
        INDArray[] outgoing = new INDArray[names.length + 1];
        for (int i = 0; i < names.length; i++) {
            // Other ranks send arrays of the right shapes only; rank 0's values replace them.
            outgoing[i] = point.isPresent() ? point.get().tensor(names[i])
                    : rank == 0 ? null : Nd4j.zeros(DataType.FLOAT, shapes[i]);
        }
        if (rank == 0 && point.isEmpty()) {
            System.arraycopy(network.init(settings.seed()), 0, outgoing, 0, names.length);
        }
        outgoing[names.length] = Nd4j.scalar((double) point.map(Checkpoint::step).orElse(0L));
        INDArray[] received = aggregator.broadcastParams(outgoing);
        TensorMemory.close(outgoing);
        int step = (int) received[names.length].getDouble(0);
        TensorMemory.close(received[names.length]);
        if (step > 0) {
            INDArray mine = point.isPresent() ? point.get().tensor(TrainingCheckpoints.LOSS_CURVE)
                    : Nd4j.zeros(DataType.FLOAT, step);
            INDArray[] soFar = aggregator.broadcastParams(mine);
            System.arraycopy(Trainer.flat(soFar[0]), 0, curve, 0, step);
            TensorMemory.close(soFar);
            TensorMemory.close(mine);
        }
        return new Start(Arrays.copyOf(received, names.length), step);
    }

    /** Rank 0: the state after {@code done} steps (parameters and loss curve so far) to the checkpoint directory. */
    private void saveCheckpoint(int done, Network network, INDArray[] params, float[] curve, int world) {
        Map<String, INDArray> tensors = network.named(params);
        INDArray soFar = Nd4j.create(Arrays.copyOf(curve, done), new long[] {done}, 'c');
        tensors.put(TrainingCheckpoints.LOSS_CURVE, soFar);
        try {
            checkpoints.save(done, tensors, Map.of(), world);
        } finally {
            TensorMemory.close(soFar);
        }
    }

    private GradientAggregator aggregator() {
        if (config.worldSize() == 1) {
            return new LocalAggregator();
        }
        // The aggregator closes what it is given; the transport is only lent to us.
        Transport lent = Transports.borrowed(transport);
        return algorithm.create(config, lent);
    }
}
