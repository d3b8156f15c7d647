package io.ringstar.train.convnet;

import io.ringstar.dl4j.DataParallel;
import io.ringstar.spark.SparkDataParallel;
import io.ringstar.spark.SparkFitSummary;
import io.ringstar.train.TrainSettings;
import io.ringstar.train.TrainSummary;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * {@code train --model convnet --spark MASTER}: the ConvNet of the other runs, trained on a Spark
 * cluster through {@link SparkDataParallel}. The driver reads the images (Fashion-MNIST when
 * installed), cuts the run's global batches into the ranks' minibatches exactly as
 * {@link DataParallel#shard} does for {@code ringstar launch} (so both visit the same batches from the
 * same start), and sends them to the cluster as an RDD of minibatches: partition {@code r} holds rank
 * {@code r}'s minibatch of every step, in step order.
 *
 * <p>The driver trains {@code --log-every} steps at a time, one {@code fit} (one barrier stage) per
 * progress line, and evaluates the returned network on the held-out images between them, as the other
 * runs' rank 0 does every {@code --log-every} steps. A line's loss is that of the stage's last global
 * batch before its update ({@link SparkFitSummary#lastLoss()}: the ranks' mean; the other runs print
 * rank 0's part). Its step time is the stage's wall time per step on the driver, each stage's set-up
 * (the network's trip to the executors, Spark's barrier, the group's start) and Spark's scheduling
 * included; the ranks' own time per step and the set-up, from {@code fit}'s summary, follow it.
 *
 * <p>The data goes from the driver into the tasks ({@code parallelize}), which every cluster can
 * run; a job over data already on the cluster would read it into the RDD there instead.
 */
public final class SparkConvNetJob {
    /** The option of {@link SparkDataParallel#fit} that picks the aggregator, and its values. */
    static final String AGGREGATOR = "aggregator";

    private final TrainSettings settings;
    private final List<ConvNetRun> runs;
    private final Path plot;
    private final Map<String, String> options;
    private final PrintStream out;
    private final ConvNetTrainer trainer;

    /**
     * The job; nothing is read or started yet.
     *
     * @param runs ps, ring or both (in that order), each from the same start; no async run
     * @param options the options of every {@code fit} (transport, timeout, ringstar's options)
     * @param plot the PNG to draw the held-out accuracy into, or {@code null}
     */
    public SparkConvNetJob(TrainSettings settings, List<ConvNetRun> runs, Map<String, String> options, Path plot,
            PrintStream out) {
        if (runs.stream().anyMatch(ConvNetRun::async)) {
            throw new IllegalArgumentException("SparkDataParallel trains in step; the async run is not one of its");
        }
        this.settings = settings;
        this.runs = List.copyOf(runs);
        this.options = Map.copyOf(options);
        this.plot = plot;
        this.out = out;
        this.trainer = new ConvNetTrainer(settings, out);
    }

    /**
     * Reads the images and checks the batch split for {@code worldSize} ranks, before Spark starts.
     *
     * @throws IllegalArgumentException for settings that do not fit the data or the world size
     * @throws UncheckedIOException for images that are missing or malformed
     */
    public void validate(int worldSize) {
        trainer.validate(worldSize, 1, runs);
    }

    /**
     * Trains every run on {@code spark} with {@code worldSize} ranks, then draws the plot. Blocks
     * until done; each stage is bounded by the ranks' timeout.
     *
     * @param master the master, for the lines printed
     * @param started how the context started, for the lines printed
     * @throws io.ringstar.spark.SparkRankException if a rank fails
     * @throws IOException if the plot cannot be written (the runs have trained)
     */
    public void run(JavaSparkContext spark, int worldSize, String master, String started) throws IOException {
        ImageData data = trainer.data();
        out.println("# data: " + data.description());
        out.printf(Locale.ROOT, "# spark: master %s (application %s, %s); %d ranks, the tasks of one barrier stage"
                + " per %d steps; options %s%n", master, spark.sc().applicationId(), started, worldSize,
                settings.logEvery(), describe(options));
        out.flush();
        List<AccuracyCurve> curves = new ArrayList<>();
        for (ConvNetRun run : runs) {
            curves.add(train(spark, run, data, worldSize, master));
        }
        if (plot != null) {
            AccuracyChart.write(plot, "convnet on " + data.name() + ", " + worldSize + " ranks on Spark " + master
                    + ": held-out accuracy", curves);
            out.println("plot: " + plot + " (held-out accuracy against training seconds, one line per run; "
                    + "evaluated on the driver every " + settings.logEvery() + " steps)");
        }
    }

    /** Secrets stay out of the output. */
    private static String describe(Map<String, String> options) {
        Map<String, String> shown = new HashMap<>(options);
        shown.replaceAll((name, value) -> name.toLowerCase(Locale.ROOT).contains("secret") ? "(hidden)" : value);
        return shown.isEmpty() ? "none" : new TreeMap<>(shown).toString();
    }

    private AccuracyCurve train(JavaSparkContext spark, ConvNetRun run, ImageData data, int worldSize,
            String master) {
        int steps = settings.steps();
        out.printf(Locale.ROOT, "train: convnet (%d parameters, Deeplearning4j) through SparkDataParallel on %s; %s,"
                + " %d rank%s, global batch %d (%d per rank), %d steps, lr %s, %d held-out images%n",
                ConvNet.PARAMETERS, master, run.label(), worldSize, worldSize == 1 ? "" : "s", settings.batchSize(),
                settings.batchSize() / worldSize, steps, settings.learningRate(), data.heldOut().size());
        Map<String, String> fitOptions = new HashMap<>(options);
        fitOptions.put(AGGREGATOR, aggregator(run));
        List<DataSetIterator> shards = new ArrayList<>();
        for (int rank = 0; rank < worldSize; rank++) {
            shards.add(DataParallel.shard(new GlobalBatches(data.train(), settings.batchSize(), settings.seed(),
                    steps), rank, worldSize));
        }
        MultiLayerNetwork network = ConvNet.create(settings.seed(), settings.learningRate());
        Progress progress = new Progress(out, run.label(), steps, settings.logEvery(), false);
        StageTimes times = new StageTimes();
        double loss = Double.NaN;
        try (HeldOut heldOut = new HeldOut(data.heldOut())) {
            progress.start(network, heldOut);
            for (int done = 0; done < steps;) {
                int chunk = Math.min(settings.logEvery(), steps - done);
                List<DataSet> minibatches = new ArrayList<>(chunk * worldSize);
                // Rank-major: parallelize cuts the list into equal contiguous slices, partition r holding rank r's.
                for (DataSetIterator shard : shards) {
                    for (int step = 0; step < chunk; step++) {
                        minibatches.add(shard.next());
                    }
                }
                JavaRDD<DataSet> rdd = spark.parallelize(minibatches, worldSize);
                long stageStart = System.nanoTime();
                SparkFitSummary summary = SparkDataParallel.fitWithSummary(network, rdd, 1, fitOptions);
                times.add(summary, System.nanoTime() - stageStart);
                minibatches.forEach(SparkConvNetJob::close);
                done += chunk;
                progress.stepDone(done, 0, summary.lastLoss(), network, heldOut, times.lastStage());
                loss = summary.lastLoss();
            }
            double trained = progress.trainingSeconds();
            AccuracyCurve curve = progress.curve();
            float[] parameters = network.params().dup().data().asFloat();
            out.println(String.format(Locale.ROOT, "train done: %s on Spark %s, %d ranks, convnet: %d steps in %.1f s"
                    + " (%d stage%s), final loss %.4f, held-out accuracy %.1f%% (%d samples), %d examples dropped;"
                    + " a step %.2f ms in the ranks, %.2f ms in all (a stage: %.2f s of set-up in the ranks, %.2f s"
                    + " of Spark's own); %s; params sha256 %s", run.label(), master, worldSize, steps, trained,
                    times.stages(), times.stages() == 1 ? "" : "s", loss,
                    100 * curve.accuracy()[curve.accuracy().length - 1], heldOut.size(),
                    times.dropped(), times.rankMillisPerStep(), times.stageMillisPerStep(),
                    times.setupSecondsPerStage(), times.sparkSecondsPerStage(),
                    times.ranksAgree() ? "the ranks agree" : "THE RANKS' PARAMETERS DIFFER",
                    TrainSummary.digest(new float[][] {parameters})));
            out.flush();
            return curve;
        } finally {
            network.close();
        }
    }

    private static String aggregator(ConvNetRun run) {
        return run == ConvNetRun.PS ? "star" : "ring";
    }

    private static void close(DataSet minibatch) {
        minibatch.getFeatures().close();
        minibatch.getLabels().close();
    }

    /** The stages of one run: what {@code fit} reported of each, and their wall time on the driver. */
    private static final class StageTimes {
        private int stages;
        private long steps;
        private long stageNanos;
        private long trainingNanos;
        private long setupNanos;
        private long dropped;
        private boolean ranksAgree = true;
        private SparkFitSummary last;

        void add(SparkFitSummary summary, long nanos) {
            stages++;
            steps += summary.stepsTrained();
            stageNanos += nanos;
            trainingNanos += summary.trainingTime().toNanos();
            setupNanos += summary.setupTime().toNanos();
            dropped += summary.droppedPerEpoch();
            ranksAgree &= summary.ranksAgree();
            last = summary;
        }

        /** The last stage's time per step in the ranks and its set-up, for its progress line. */
        String lastStage() {
            return String.format(Locale.ROOT, "  (in the ranks %6.2f ms, set-up %.2f s)",
                    last.timePerStep().toNanos() / 1e6, last.setupTime().toNanos() / 1e9);
        }

        int stages() {
            return stages;
        }

        long dropped() {
            return dropped;
        }

        boolean ranksAgree() {
            return ranksAgree;
        }

        double rankMillisPerStep() {
            return trainingNanos / 1e6 / Math.max(1, steps);
        }

        double stageMillisPerStep() {
            return stageNanos / 1e6 / Math.max(1, steps);
        }

        double setupSecondsPerStage() {
            return setupNanos / 1e9 / Math.max(1, stages);
        }

        /** A stage's wall time on the driver less the ranks' set-up and training: scheduling, tasks, results. */
        double sparkSecondsPerStage() {
            return (stageNanos - setupNanos - trainingNanos) / 1e9 / Math.max(1, stages);
        }
    }
}
