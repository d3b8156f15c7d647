package io.ringstar.train.convnet;

import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.LocalAggregator;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.dl4j.DataParallel;
import io.ringstar.train.TrainSettings;
import io.ringstar.train.TrainSummary;
import java.io.PrintStream;
import java.time.Duration;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * One rank's synchronous ConvNet training, the way a DL4J user would write it: build the network,
 * {@link DataParallel#attach} it to the star or the ring (rank 0's parameters and updater state go to
 * every rank), then call the network's own {@code fit} on this rank's part of each global batch
 * ({@link DataParallel#shard} of {@link GlobalBatches}); the attached listener averages the gradient
 * across the ranks every step, so every rank applies the same update. Rank 0 reports; its loss is
 * that of its own part of the batch.
 */
final class SyncConvNet {
    /** The aggregators' gradient average, as their statistics name it. */
    private static final String REDUCE_GRADIENTS = "reduceGradients";

    private final TrainSettings settings;
    private final ConvNetRun run;
    private final ImageData data;
    private final DistributedConfig config;
    private final Transport transport;
    private final PrintStream out;

    /** @param transport lent for the run: it stays open when the run ends */
    SyncConvNet(TrainSettings settings, ConvNetRun run, ImageData data, DistributedConfig config, Transport transport,
            PrintStream out) {
        this.settings = settings;
        this.run = run;
        this.data = data;
        this.config = config;
        this.transport = transport;
        this.out = out;
    }

    ConvNetOutcome train() {
        int rank = config.rank();
        boolean reporter = rank == 0;
        MultiLayerNetwork network = ConvNet.create(settings.seed(), settings.learningRate());
        GlobalBatches global = new GlobalBatches(data.train(), settings.batchSize(), settings.seed(),
                settings.steps());
        Progress progress = new Progress(reporter ? out : null, run.label(), settings.steps(), settings.logEvery());
        try (GradientAggregator aggregator = aggregator();
                HeldOut heldOut = new HeldOut(data.heldOut())) {
            DataParallel.attach(network, aggregator);
            DataSetIterator batches = DataParallel.shard(global, rank, config.worldSize());
            progress.start(network, heldOut);
            long start = System.nanoTime();
            double loss = Double.NaN;
            long reported = 0;
            for (int step = 0; step < settings.steps(); step++) {
                DataSet part = batches.next();
                network.fit(part);
                loss = network.score();
                part.getFeatures().close();
                part.getLabels().close();
                // The reduceGradients calls' time since the last line, from the aggregator's statistics: read
                // only for a line, as a snapshot allocates.
                long comm = 0;
                if (progress.printsAfter(step + 1)) {
                    long now = reduceNanos(aggregator);
                    comm = now - reported;
                    reported = now;
                }
                progress.stepDone(step + 1, comm, loss, network, heldOut, "");
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            AccuracyCurve curve = progress.curve();
            double accuracy = reporter ? curve.accuracy()[curve.accuracy().length - 1] : heldOut.accuracy(network);
            float[] parameters = network.params().dup().data().asFloat();
            TrainSummary summary = new TrainSummary(settings.steps(), loss, accuracy, elapsed,
                    Math.min(1, reduceNanos(aggregator) / (double) Math.max(1, elapsed.toNanos())), new float[0],
                    heldOut.size(), run.algorithm().label(), "sync", config.worldSize(), -1, -1, -1,
                    TrainSummary.digest(new float[][] {parameters}), 0);
            if (reporter) {
                out.println(summary.describe(TrainSettings.Model.CONVNET.label()));
            }
            return new ConvNetOutcome(summary, reporter ? curve : null, parameters);
        } finally {
            network.close();
        }
    }

    /**
     * The time of every {@code reduceGradients} call so far (DataParallel's, one per step), from the
     * aggregator's statistics; 0 for a group of one, whose aggregator keeps none.
     */
    private static long reduceNanos(GradientAggregator aggregator) {
        return aggregator.collectiveStatistics().operation(REDUCE_GRADIENTS).map(o -> o.total().toNanos()).orElse(0L);
    }

    private GradientAggregator aggregator() {
        if (config.worldSize() == 1) {
            return new LocalAggregator();
        }
        // The aggregator closes what it is given; the transport is only lent to us.
        return run.algorithm().create(config, Transports.borrowed(transport));
    }
}
