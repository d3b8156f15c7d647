package io.ringstar.train;

import io.ringstar.AsyncParameterServer;
import io.ringstar.AsyncSettings;
import io.ringstar.AsyncStatistics;
import io.ringstar.DistributedConfig;
import io.ringstar.ParameterSnapshot;
import io.ringstar.SgdMomentum;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.ranks.Algorithm;
import io.ringstar.train.data.Dataset;
import io.ringstar.train.model.Network;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * {@code train --mode async}: one rank's part in training on the library's {@link
 * AsyncParameterServer}. Ranks {@code 0 … servers-1} (option {@code servers}, {@code --option
 * servers=N}, default 1) serve: each holds its range of the parameters and applies plain SGD
 * ({@code p -= lr * g}) to every gradient as it arrives, and computes none. Each of the
 * {@code W = n - servers} workers takes its slice ({@code B/W} samples) of global batch {@code t}
 * at its step {@code t}, pushes the gradient and goes on with the parameters the servers answer,
 * never waiting for the other workers except as {@code --max-staleness} says.
 *
 * <h2>Output</h2>
 * The first worker (rank {@code servers}) reports: a progress line every {@code --log-every} of its
 * steps (its batch loss, the held-out accuracy of the parameters it just got, the share of its time
 * spent in {@code push} so far and the pushes' figures from the server's
 * {@link AsyncParameterServer#collectiveStatistics()}, the parameters' version and the servers'
 * staleness counts so far) and the summary, taken on the final parameters that
 * {@link AsyncParameterServer#finish()} returns once every worker is done. Its held-out evaluation
 * runs between two of its pushes, so it counts against the servers' timeout ({@code --timeout}) as
 * the gradient's computation does: a server fails naming this worker if the two together take
 * longer. One forward pass over the held-out set takes far less than the timeout for the bench's
 * models and data; a larger held-out set or slower model needs a larger timeout.
 *
 * <h2>Checkpoints</h2>
 * With {@code --checkpoint-dir DIR}, each server checkpoints its own state in {@code
 * DIR/ps/server-<s>} after every {@code --checkpoint-every} rounds of one update per worker and at
 * the end; with {@code --resume} each restores its newest, and each worker restarts at the lowest
 * step any server recorded for it (see {@link AsyncParameterServer}). Async runs are not
 * reproducible: the order in which gradients arrive decides the result.
 */
final class AsyncTrainingRun {
    private final TrainSettings settings;
    private final Network network;
    private final Dataset train;
    private final Dataset heldOut;
    private final DistributedConfig config;
    private final Transport transport;
    private final PrintStream out;
    private final Trainer.StepHook hook;
    private final BatchSchedule schedule;
    private final CheckpointSettings checkpointSettings;
    private final Map<String, String> identity;

    AsyncTrainingRun(TrainSettings settings, Network network, Dataset train, Dataset heldOut, DistributedConfig config,
            Transport transport, PrintStream out, Trainer.StepHook hook, BatchSchedule schedule,
            CheckpointSettings checkpointSettings, Map<String, String> identity) {
        this.settings = settings;
        this.network = network;
        this.train = train;
        this.heldOut = heldOut;
        this.config = config;
        this.transport = transport;
        this.out = out;
        this.hook = hook;
        this.schedule = schedule;
        this.checkpointSettings = checkpointSettings;
        this.identity = identity;
    }

    Trainer.Outcome run() {
        int servers = AggregatorOptions.SERVERS.value(config);
        AsyncSettings.Builder async = AsyncSettings.builder(SgdMomentum.plain((float) settings.learningRate()))
                .maxStaleness(settings.maxStaleness());
        if (checkpointSettings.enabled()) {
            async.checkpointDirectory(checkpointSettings.directory().resolve(Algorithm.PS.label()))
                    .checkpointEvery((long) checkpointSettings.every() * (config.worldSize() - servers))
                    .resume(checkpointSettings.resume());
            identity.forEach(async::checkpointMetadata);
        }
        // The transport is the caller's: the parameter server borrows it.
        try (AsyncParameterServer ps = new AsyncParameterServer(config, Transports.borrowed(transport),
                async.build(), network.shapes())) {
            return ps.isServer() ? serve(ps) : work(ps, servers);
        }
    }

    private Trainer.Outcome serve(AsyncParameterServer ps) {
        INDArray[] initial = network.init(settings.seed());
        long start = System.nanoTime();
        AsyncStatistics counts;
        try {
            counts = ps.serve(initial);
        } finally {
            TensorMemory.close(initial);
        }
        TrainSummary summary = new TrainSummary(settings.steps(), Double.NaN, Double.NaN,
                Duration.ofNanos(System.nanoTime() - start), 0, new float[0], heldOut.size(), Algorithm.PS.label(),
                "async", config.worldSize(), counts.maxLead(), counts.maxGradientAge(), counts.heldBack(), "", 0);
        return new Trainer.Outcome(summary, null);
    }

    private Trainer.Outcome work(AsyncParameterServer ps, int servers) {
        int rank = config.rank();
        int worker = rank - servers;
        int shard = settings.batchSize() / ps.workers();
        boolean reporter = worker == 0;
        INDArray heldOutX = reporter ? heldOut.allFeatures() : null;
        long start = System.nanoTime();
        ParameterSnapshot current = ps.pull();
        int firstStep = Math.toIntExact(current.step());
        if (reporter && checkpointSettings.resume()) {
            out.println(firstStep > 0 ? "train: resuming ps async at step " + firstStep + " (each server from its "
                    + "newest checkpoint in " + checkpointSettings.directory().resolve(Algorithm.PS.label()) + ")"
                    : "train: --resume: no checkpoint of the servers; starting ps from step 0");
        }
        float[] curve = new float[settings.steps()];
        // The pushes' time comes from the server's statistics, read at each progress line; the steps are timed here.
        CollectiveWindow pushes = new CollectiveWindow(ps::collectiveStatistics, CollectiveWindow.PUSH);
        long pushNanos = 0;
        long busyNanos = 0;
        long windowStart = System.nanoTime();
        try {
            for (int step = firstStep; step < settings.steps(); step++) {
                Trainer.callHook(hook, rank, step);
                long stepStart = System.nanoTime();
                int[] order = schedule.order(step);
                int from = schedule.offset(step) + worker * shard;
                INDArray x = train.features(order, from, from + shard);
                INDArray y = train.oneHot(order, from, from + shard);
                Network.LossAndGradients result = network.lossAndGradients(current.parameters(), x, y);
                TensorMemory.close(x, y);
                curve[step] = (float) result.loss();
                ParameterSnapshot fresh;
                try {
                    fresh = ps.push(result.gradients());
                } finally {
                    TensorMemory.close(result.gradients());
                }
                long now = System.nanoTime();
                busyNanos += now - stepStart;
                TensorMemory.close(current.parameters());
                current = fresh;
                int done = step + 1;
                if (reporter && (done % settings.logEvery() == 0 || done == settings.steps())) {
                    int inWindow = Math.min(step % settings.logEvery(), step - firstStep) + 1;
                    // Between two pushes: this and the next gradient must fit in the servers' timeout (see above).
                    double accuracy = network.accuracy(current.parameters(), heldOutX, heldOut.labels());
                    AsyncStatistics counts = ps.statistics();
                    CollectiveWindow.Figures figures = pushes.next();
                    pushNanos += figures.nanos();
                    Trainer.printProgress(out, done, settings.steps(), curve[step], accuracy,
                            (now - windowStart) / 1e6 / inWindow, Trainer.share(pushNanos, busyNanos),
                            figures.describe() + String.format(Locale.ROOT, "  version %d  max lead %d  held back %d",
                                    current.version(), counts.maxLead(), counts.heldBack()));
                    windowStart = System.nanoTime();
                }
            }
            TensorMemory.close(current.parameters());
            current = null;
            current = ps.finish();
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            INDArray x = reporter ? heldOutX : heldOut.allFeatures();
            double accuracy = network.accuracy(current.parameters(), x, heldOut.labels());
            if (!reporter) {
                TensorMemory.close(x);
            }
            float[][] values = Trainer.toFloats(current.parameters());
            AsyncStatistics counts = ps.statistics();
            long allPushes = CollectiveWindow.totalNanos(ps.collectiveStatistics(), CollectiveWindow.PUSH);
            TrainSummary summary = new TrainSummary(settings.steps(), curve[curve.length - 1], accuracy, elapsed,
                    Trainer.share(allPushes, busyNanos), curve, heldOut.size(), Algorithm.PS.label(), "async",
                    config.worldSize(), counts.maxLead(), counts.maxGradientAge(), counts.heldBack(),
                    TrainSummary.digest(values), firstStep);
            if (reporter) {
                out.println(summary.describe(settings.model().label()));
            }
            return new Trainer.Outcome(summary, values);
        } finally {
            if (current != null) {
                TensorMemory.close(current.parameters());
            }
            if (heldOutX != null) {
                TensorMemory.close(heldOutX);
            }
        }
    }
}
