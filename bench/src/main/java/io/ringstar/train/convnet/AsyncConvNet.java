package io.ringstar.train.convnet;

import io.ringstar.AsyncParameterServer;
import io.ringstar.AsyncSettings;
import io.ringstar.AsyncStatistics;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.ParameterSnapshot;
import io.ringstar.SgdMomentum;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.dl4j.DataParallel;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.train.TrainSettings;
import io.ringstar.train.TrainSummary;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One rank's part in training the ConvNet on the library's {@link AsyncParameterServer}, as
 * {@code train --mode async} does for the other models: ranks {@code 0 … servers-1} serve (plain SGD
 * on every gradient as it arrives, {@code p -= lr·g}), the {@code W} other ranks are workers, and
 * worker {@code w} takes part {@code w} of {@code W} of global batch {@code t} at its step {@code t}
 * ({@link DataParallel#shard}). A worker's network (DL4J's {@code NoOp} updater) is attached to the
 * server with {@link DataParallel#attach(MultiLayerNetwork, AsyncParameterServer)}: each step of its own
 * {@code fit} pushes the gradient and installs the parameters the servers answer with, and
 * {@link DataParallel#finish(MultiLayerNetwork, AsyncParameterServer)} installs the final ones. The
 * parameters travel as one flat tensor, the network's own parameter vector.
 * The first worker reports; at the end it sends its accuracy curve to every rank (one broadcast),
 * so that rank 0 can plot it.
 */
final class AsyncConvNet {
    private final TrainSettings settings;
    private final ImageData data;
    private final DistributedConfig config;
    private final Transport transport;
    private final PrintStream out;

    /** @param transport lent for the run: it stays open when the run ends */
    AsyncConvNet(TrainSettings settings, ImageData data, DistributedConfig config, Transport transport,
            PrintStream out) {
        this.settings = settings;
        this.data = data;
        this.config = config;
        this.transport = transport;
        this.out = out;
    }

    ConvNetOutcome train() {
        int servers = AggregatorOptions.SERVERS.value(config);
        AsyncSettings async = AsyncSettings.builder(SgdMomentum.plain((float) settings.learningRate()))
                .maxStaleness(settings.maxStaleness()).build();
        // Servers and workers alike: the servers serve its starting parameters, the workers train it.
        MultiLayerNetwork network = ConvNet.createForAsyncWorker(settings.seed());
        boolean reporter = config.rank() == servers;
        Progress progress = new Progress(reporter ? out : null, ConvNetRun.ASYNC.label(), settings.steps(),
                settings.logEvery());
        ConvNetOutcome outcome;
        // One tensor, the network's own parameter vector, as DataParallel's asynchronous attach expects.
        long[] shape = network.params().shape();
        try (AsyncParameterServer ps = new AsyncParameterServer(config, Transports.borrowed(transport), async,
                shape)) {
            outcome = ps.isServer() ? serve(ps, network) : work(ps, network, servers, progress);
        } finally {
            network.close();
        }
        // Every rank takes part: the reporting worker's curve goes to rank 0, which plots it.
        INDArray packed = Nd4j.createFromArray(progress.packed());
        try (Communicator communicator = new Communicator(config, Transports.borrowed(transport))) {
            communicator.broadcast(servers, packed);
        }
        AccuracyCurve curve = Progress.unpacked(ConvNetRun.ASYNC.label(), packed.toDoubleVector());
        TensorMemory.close(packed);
        return new ConvNetOutcome(outcome.summary(), curve, outcome.parameters());
    }

    private ConvNetOutcome serve(AsyncParameterServer ps, MultiLayerNetwork network) {
        long start = System.nanoTime();
        AsyncStatistics counts = ps.serve(network.params());
        TrainSummary summary = new TrainSummary(settings.steps(), Double.NaN, Double.NaN,
                Duration.ofNanos(System.nanoTime() - start), 0, new float[0], data.heldOut().size(),
                ConvNetRun.ASYNC.algorithm().label(), "async", config.worldSize(), counts.maxLead(),
                counts.maxGradientAge(), counts.heldBack(), "", 0);
        return new ConvNetOutcome(summary, null, new float[0]);
    }

    private ConvNetOutcome work(AsyncParameterServer ps, MultiLayerNetwork network, int servers, Progress progress) {
        int worker = config.rank() - servers;
        GlobalBatches global = new GlobalBatches(data.train(), settings.batchSize(), settings.seed(),
                settings.steps());
        try (HeldOut heldOut = new HeldOut(data.heldOut())) {
            DataParallel.attach(network, ps);
            DataSetIterator batches = DataParallel.shard(global, worker, ps.workers());
            GradientClock clock = new GradientClock();
            network.addListeners(clock);
            progress.start(network, heldOut);
            long start = System.nanoTime();
            long commNanos = 0;
            double loss = Double.NaN;
            for (int step = 0; step < settings.steps(); step++) {
                DataSet part = batches.next();
                network.fit(part);
                long comm = System.nanoTime() - clock.gradientAt;
                commNanos += comm;
                loss = network.score();
                part.getFeatures().close();
                part.getLabels().close();
                AsyncStatistics counts = ps.statistics();
                progress.stepDone(step + 1, comm, loss, network, heldOut, String.format(Locale.ROOT,
                        "  max lead %d  held back %d", counts.maxLead(), counts.heldBack()));
            }
            ParameterSnapshot last = DataParallel.finish(network, ps);
            TensorMemory.close(last.parameters());
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            double accuracy = heldOut.accuracy(network);
            float[] parameters = network.params().dup().data().asFloat();
            AsyncStatistics counts = ps.statistics();
            TrainSummary summary = new TrainSummary(settings.steps(), loss, accuracy, elapsed,
                    Math.min(1, commNanos / (double) Math.max(1, elapsed.toNanos())), new float[0], heldOut.size(),
                    ConvNetRun.ASYNC.algorithm().label(), "async", config.worldSize(), counts.maxLead(),
                    counts.maxGradientAge(), counts.heldBack(), TrainSummary.digest(new float[][] {parameters}), 0);
            if (progress.reporting()) {
                out.println(summary.describe(TrainSettings.Model.CONVNET.label()));
            }
            return new ConvNetOutcome(summary, null, parameters);
        }
    }

    /**
     * When the last step's gradient was ready: the time from then until {@code fit} returns is the
     * worker's communication (DataParallel pushes the gradient and installs the servers' reply as the
     * step ends; the NoOp update in between costs next to nothing).
     */
    private static final class GradientClock extends BaseTrainingListener {
        private long gradientAt = System.nanoTime();

        @Override
        public void onGradientCalculation(Model model) {
            gradientAt = System.nanoTime();
        }
    }
}
