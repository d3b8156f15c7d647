package io.ringstar.train;

import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.LocalAggregator;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.ranks.Algorithm;
import io.ringstar.train.data.CsvReader;
import io.ringstar.train.data.Dataset;
import io.ringstar.train.data.IdxReader;
import io.ringstar.train.data.SyntheticData;
import io.ringstar.train.model.Network;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Data-parallel SGD on one rank, as {@code ringstar train} runs it.
 *
 * <h2>Synchronous training (ring, or parameter server with {@code --mode sync})</h2>
 * Rank 0 draws the initial parameters from the seed and {@link GradientAggregator#broadcastParams}
 * makes every rank start from them. Every rank reads the same data and splits off the same
 * held-out part. The training samples are visited in global batches of {@code B}: an epoch is one
 * permutation of the training samples drawn from the seed, cut into {@code trainSize / B} batches
 * (the rest of the epoch is skipped). Rank {@code r} of {@code N} takes positions
 * {@code [r*B/N, (r+1)*B/N)} of each global batch, computes the mean loss and its gradient on that
 * shard, and one {@link GradientAggregator#reduceGradients} call averages the gradients (FLOAT, one
 * tensor per parameter) together with the shard loss (a DOUBLE scalar) over the ranks. As the
 * shards are equally large, the average of shard means is the global batch mean, so N ranks
 * follow the trajectory of one process on the same global batches up to float rounding. Every
 * rank then applies the same averaged gradient, so the parameters stay identical.
 *
 * <h2>Checkpoints and resume ({@link CheckpointSettings})</h2>
 * Rank 0 alone writes checkpoints (the parameters are identical on every rank), after every
 * {@code every} steps and after the last, into {@code DIR/<algorithm>}: the parameters, the step,
 * the loss curve so far and the settings a resume must match ({@link TrainingCheckpoints}). Plain
 * SGD keeps no other optimiser state. On resume rank 0 alone reads the newest valid checkpoint
 * and the first {@link GradientAggregator#broadcastParams} call carries its parameters and its step
 * to every rank, so the other ranks never read the directory. As the batch of step {@code s}
 * depends only on the seed and {@code s}, and every reduction adds in a fixed order, a resumed run
 * ends with the parameters of an uninterrupted one bit for bit. A save blocks rank 0 for its disk
 * I/O after the step's timing is taken; the other ranks wait for it in the next step's reduce.
 *
 * <h2>Asynchronous training ({@code --mode async}, parameter server only)</h2>
 * On the library's {@link io.ringstar.AsyncParameterServer}, see {@link AsyncTrainingRun}: ranks
 * {@code 0 … servers-1} (option {@code servers}) serve and do not compute gradients; each of the
 * {@code N-servers} workers takes its slice ({@code B/(N-servers)} samples) of global batch
 * {@code t} at its step {@code t}, and the first worker prints. With one rank there is nobody to
 * wait for, and it trains synchronously.
 *
 * <h2>Progress lines</h2>
 * {@code step s/S  loss L  held-out acc A%  step T ms  comm C%  OP p50 P ms p99 Q ms waiting W%}:
 * {@code L} is the training loss of step {@code s} (sync: of the global batch; async: of the first
 * worker's slice of it), {@code A} the accuracy of the current parameters on the held-out samples,
 * {@code T} the mean wall time per step since the previous line and {@code C} the share of that
 * time spent in the aggregator's {@code reduceGradients} (sync, rank 0's own calls over the same
 * steps) or, async, in the worker's {@code push} (from sending a gradient to holding the reply,
 * over the run so far); with {@code --overlap}, the wait for the buckets after the backward pass.
 * The calls' time comes from the aggregator's, communicator's or server's
 * {@code collectiveStatistics()}, read once per line; the steps are timed here. {@code OP} is that
 * operation ({@code reduceGradients}, {@code push}, or {@code allReduce}, one per bucket, with
 * overlap), {@code P} and {@code Q} the median and 99th percentile of one call since the start, and
 * {@code W} the share of the calls' time since the previous line spent waiting for peers; a group
 * of one rank, which keeps no statistics, has no such part. Evaluation is not counted in any of
 * them. Async lines add the parameter version (gradients applied) and the servers' largest lead of
 * a worker over the slowest and replies held back so far; overlap lines the backward pass's time.
 *
 * <h2>Threads, blocking, output</h2>
 * {@link #run} blocks until this rank's training is done; every wait on another rank is bounded
 * by {@code config.timeout()}, after which a {@link io.ringstar.CollectiveException} names the
 * operation and the ranks. The transport is borrowed: it is never closed here. A {@code Trainer}
 * holds no per-run state except the loaded data set, which is read-only, so one instance may run
 * every rank of a JVM at once, each on its own thread with its own ND4J arrays; the trainers that
 * {@link #withAlgorithm} makes share that data set too. Only rank 0
 * prints: a start line, a progress line every {@code logEvery} steps and the summary.
 */
public final class Trainer {
    /** Called before each step of a rank that computes gradients; tests slow or fail a rank with it. */
    @FunctionalInterface
    interface StepHook {
        void beforeStep(int rank, int step) throws Exception;
    }

    /** A rank's summary and its final parameters (for tests that compare ranks). */
    record Outcome(TrainSummary summary, float[][] parameters) {
    }

    private final TrainSettings settings;
    private final Algorithm algorithm;
    private final PrintStream out;
    private final StepHook hook;
    private final SplitData data;
    private final CheckpointSettings checkpointSettings;
    private final TrainingCheckpoints checkpoints;
    private final OverlapSettings overlap;

    /**
     * @param settings what to train
     * @param algorithm the aggregator that averages the gradients
     * @param out where rank 0 prints progress; other ranks print nothing
     * @throws IllegalArgumentException for async mode with the ring
     */
    public Trainer(TrainSettings settings, Algorithm algorithm, PrintStream out) {
        this(settings, algorithm, out, CheckpointSettings.NONE);
    }

    /**
     * A trainer that checkpoints and resumes as {@code checkpoints} says; see {@link CheckpointSettings}.
     *
     * @throws IllegalArgumentException for async mode with the ring
     */
    public Trainer(TrainSettings settings, Algorithm algorithm, PrintStream out, CheckpointSettings checkpoints) {
        this(settings, algorithm, out, (rank, step) -> { }, checkpoints);
    }

    Trainer(TrainSettings settings, Algorithm algorithm, PrintStream out, StepHook hook) {
        this(settings, algorithm, out, hook, CheckpointSettings.NONE);
    }

    Trainer(TrainSettings settings, Algorithm algorithm, PrintStream out, StepHook hook,
            CheckpointSettings checkpoints) {
        this(settings, algorithm, out, hook, new SplitData(settings), checkpoints, OverlapSettings.NONE);
    }

    /**
     * This trainer with rank {@code slow.rank()} sleeping {@code slow.millis()} before each of its
     * steps (sharing this one's data), in sync and async modes alike; see {@link SlowRankSettings}.
     */
    public Trainer withSlowRank(SlowRankSettings slow) {
        if (!slow.enabled()) {
            return this;
        }
        StepHook inner = hook;
        StepHook slowed = (rank, step) -> {
            slow.beforeStep(rank);
            inner.beforeStep(rank, step);
        };
        return new Trainer(settings, algorithm, out, slowed, data, checkpointSettings, overlap);
    }

    private Trainer(TrainSettings settings, Algorithm algorithm, PrintStream out, StepHook hook, SplitData data,
            CheckpointSettings checkpoints, OverlapSettings overlap) {
        if (settings.model() == TrainSettings.Model.CONVNET) {
            throw new IllegalArgumentException("--model convnet is io.ringstar.train.convnet.ConvNetTrainer's");
        }
        if (settings.mode() == TrainSettings.Mode.ASYNC && algorithm != Algorithm.PS) {
            throw new IllegalArgumentException("--mode async needs the parameter server (--algorithm ps); "
                    + "the ring is always synchronous");
        }
        if (settings.mode() == TrainSettings.Mode.ASYNC && overlap.enabled()) {
            throw new IllegalArgumentException("--" + OverlapSettings.FLAG + " is for --mode sync (the buckets are"
                    + " averaged across every rank in step)");
        }
        this.overlap = overlap;
        this.settings = settings;
        this.algorithm = algorithm;
        this.out = out;
        this.hook = hook;
        this.data = data;
        this.checkpointSettings = checkpoints;
        this.checkpoints = new TrainingCheckpoints(checkpoints, settings, algorithm, out);
    }

    /**
     * A trainer of the same settings with another algorithm that shares this one's data: whichever
     * of them needs the data first reads (or generates) it, once, and both train on that one copy,
     * so {@code --algorithm both} neither reads the files twice nor holds the samples twice.
     *
     * @throws IllegalArgumentException for async mode with the ring
     */
    public Trainer withAlgorithm(Algorithm other) {
        return new Trainer(settings, other, out, hook, data, checkpointSettings, overlap);
    }

    /**
     * This trainer with {@code overlap}'s way of averaging the gradients (sharing its data).
     *
     * @throws IllegalArgumentException for overlap in async mode
     */
    public Trainer withOverlap(OverlapSettings other) {
        return new Trainer(settings, algorithm, out, hook, data, checkpointSettings, other);
    }

    /**
     * Runs this rank's whole training and returns its summary. Blocks until done; every wait is
     * bounded by {@code config.timeout()}. Rank 0 prints progress and the summary.
     *
     * @param config this rank's place in the group; must match the transport
     * @param transport an open transport of the group, borrowed (not closed here); ignored when the
     *     world size is 1
     * @throws IllegalArgumentException if the data cannot be read or does not fit the settings
     *     (for example a global batch that does not divide evenly among the ranks)
     * @throws io.ringstar.CollectiveException if another rank fails or a wait times out
     */
    public TrainSummary run(DistributedConfig config, Transport transport) {
        return runWithParameters(config, transport).summary();
    }

    /**
     * Loads the data (once for this Trainer and those {@link #withAlgorithm} made) and checks that
     * the settings fit a group of {@code worldSize} ranks, without touching the network: a command
     * line calls this before it connects so that a bad flag or an unreadable file stops the program
     * at once.
     *
     * @throws IllegalArgumentException if the data cannot be read or does not fit the settings
     *     (for example a global batch that does not divide evenly among the ranks)
     */
    public void validate(int worldSize) {
        validate(worldSize, 1);
    }

    /**
     * {@link #validate(int)} for a group whose ranks {@code 0 … servers-1} serve in async mode
     * (option {@code servers}).
     *
     * @throws IllegalArgumentException as {@link #validate(int)} does, or if async mode would leave no worker
     */
    public void validate(int worldSize, int servers) {
        Dataset train = data.get()[0];
        if (isAsync(worldSize) && servers >= worldSize) {
            throw new IllegalArgumentException("--mode async with option servers=" + servers + " leaves no worker "
                    + "among " + worldSize + " ranks; use at most " + (worldSize - 1) + " servers");
        }
        int computing = computingRanks(worldSize, servers);
        if (settings.batchSize() % computing != 0) {
            throw new IllegalArgumentException("--batch-size " + settings.batchSize() + " does not split evenly among "
                    + "the " + computing + " ranks that compute gradients (" + settings.mode().label() + ", world size "
                    + worldSize + "); use a multiple of " + computing);
        }
        if (settings.batchSize() > train.size()) {
            throw new IllegalArgumentException("--batch-size " + settings.batchSize() + " exceeds the "
                    + train.size() + " training samples");
        }
    }

    /**
     * With {@code --resume}, reads the checkpoint to resume from now and checks that it was
     * written by this very run (model, data, seed, world size, batch size, ...), without touching
     * the network: a command line calls this, in the process that runs rank 0 only (the others
     * need not see the directory), before it connects. Rank 0's run then takes this checkpoint.
     *
     * @throws IllegalArgumentException if the checkpoint is of another run, naming what differs
     * @throws java.io.UncheckedIOException if the checkpoint directory cannot be listed
     */
    public void checkResume(int worldSize) {
        validate(worldSize);
        checkpoints.checkResume(worldSize, network());
    }

    private Network network() {
        Dataset train = data.get()[0];
        return settings.model() == TrainSettings.Model.SOFTMAX ? Network.softmax(train.featureCount(),
                train.classCount()) : Network.mlp(train.featureCount(), settings.hidden(), train.classCount());
    }

    /** Whether a group of {@code worldSize} trains asynchronously: one rank alone has nobody to wait for. */
    private boolean isAsync(int worldSize) {
        return settings.mode() == TrainSettings.Mode.ASYNC && worldSize > 1;
    }

    /** The ranks that compute gradients: all of them, except the async servers (ranks 0 to servers-1). */
    private int computingRanks(int worldSize, int servers) {
        return isAsync(worldSize) ? worldSize - servers : worldSize;
    }

    Outcome runWithParameters(DistributedConfig config, Transport transport) {
        int servers = AggregatorOptions.SERVERS.value(config);
        validate(config.worldSize(), servers);
        Dataset[] split = data.get();
        Dataset train = split[0];
        Dataset heldOut = split[1];
        Network network = network();
        boolean async = isAsync(config.worldSize());
        int computing = computingRanks(config.worldSize(), servers);
        if (config.rank() == 0) {
            out.printf(Locale.ROOT, "train: %s on %s; %s %s, %d rank%s, global batch %d (%d per %s), %d steps, "
                    + "lr %s, %d held-out samples%s%n", settings.model().label() + (settings.model()
                    == TrainSettings.Model.MLP ? " (hidden " + settings.hidden() + ")" : ""), settings.describeData(),
                    algorithm.label(), async ? "async" : "sync", config.worldSize(),
                    config.worldSize() == 1 ? "" : "s", settings.batchSize(), settings.batchSize() / computing,
                    async ? "worker" : "rank", settings.steps(), settings.learningRate(), heldOut.size(),
                    async ? ", max staleness " + settings.maxStaleness() + ", " + servers + " server"
                            + (servers == 1 ? "" : "s") : "");
        }
        if (async) {
            return new AsyncTrainingRun(settings, network, train, heldOut, config, transport, out, hook,
                    new BatchSchedule(train.size(), settings.batchSize(), settings.seed()), checkpointSettings,
                    checkpoints.identity(config.worldSize())).run();
        }
        return new SyncTraining(settings, algorithm, network, train, heldOut, config, transport, out, hook, checkpoints,
                overlap).run();
    }

    /** Runs a test's step hook; a checked exception from it fails the rank like any other error. */
    static void callHook(StepHook hook, int rank, int step) {
        try {
            hook.beforeStep(rank, step);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("step hook of rank " + rank + " failed at step " + step, e);
        }
    }

    static double share(long part, long whole) {
        return whole <= 0 ? 0 : Math.min(1, part / (double) whole);
    }

    static void printProgress(PrintStream out, int step, int steps, double loss, double accuracy, double stepMillis,
            double commShare, String extra) {
        int width = Integer.toString(steps).length();
        out.printf(Locale.ROOT, "step %" + width + "d/%d  loss %.4f  held-out acc %5.1f%%  step %6.2f ms"
                + "  comm %3.0f%%%s%n",
                step, steps, loss, 100 * accuracy, stepMillis, 100 * commShare, extra);
    }

    /** The parameters as plain 'c'-order float arrays, one per tensor. */
    static float[][] toFloats(INDArray[] params) {
        float[][] values = new float[params.length][];
        for (int i = 0; i < params.length; i++) {
            values[i] = flat(params[i]);
        }
        return values;
    }

    /** One tensor's values in 'c' order, whatever its own order. */
    static float[] flat(INDArray array) {
        // The element-wise stride, not ordering(), tells a permuted array apart; a view's data() is
        // its whole buffer, so a view is copied too.
        if (!array.isView() && TensorMemory.isLinearInCOrder(array)) {
            return array.data().asFloat();
        }
        INDArray copy = array.dup('c');
        float[] values = copy.data().asFloat();
        TensorMemory.close(copy);
        return values;
    }
}
