package io.ringstar.train.convnet;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.train.TrainSettings;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code ringstar train --model convnet}: the sources' small {@link ConvNet} as a Deeplearning4j
 * network, trained data-parallel on {@link ImageData} (Fashion-MNIST when installed) through
 * {@link io.ringstar.dl4j.DataParallel} with the star or the ring ({@link SyncConvNet}), or on the
 * asynchronous parameter server ({@link AsyncConvNet}). Every run starts from the same parameters
 * (drawn from the seed) and visits the same global batches, so the runs of one job compare.
 *
 * <p>Uses of the settings: {@code --steps} (async: per worker), {@code --batch-size} (the global
 * batch, split evenly among the ranks that compute gradients), {@code --lr} (plain SGD),
 * {@code --eval-size}, {@code --log-every}, {@code --seed}, {@code --max-staleness}, {@code --data}
 * and, for synthetic images, {@code --samples}. The MLP's {@code --hidden}, {@code --features} and
 * {@code --classes} do not apply.
 *
 * <p>Threads: {@link #run} blocks until the rank's run is done, every wait bounded by the
 * configuration's timeout. One instance may run every rank of a JVM at once, each on its own thread:
 * it holds only the images, read once on first use and read-only after that.
 */
public final class ConvNetTrainer {
    private final TrainSettings settings;
    private final PrintStream out;
    private final Path fashionMnist;
    private ImageData data;

    /** A trainer that looks for Fashion-MNIST where Debian installs it ({@link ImageData#FASHION_MNIST}). */
    public ConvNetTrainer(TrainSettings settings, PrintStream out) {
        this(settings, out, ImageData.FASHION_MNIST);
    }

    /** A trainer that looks for Fashion-MNIST in {@code fashionMnist} (tests point it elsewhere). */
    ConvNetTrainer(TrainSettings settings, PrintStream out, Path fashionMnist) {
        this.settings = settings;
        this.out = out;
        this.fashionMnist = fashionMnist;
    }

    /** The images, read or made on the first call. */
    public synchronized ImageData data() {
        if (data == null) {
            data = ImageData.load(settings, fashionMnist);
        }
        return data;
    }

    /**
     * Reads the images and checks that the settings fit {@code runs} in a group of {@code worldSize}
     * ranks ({@code servers} of them serving in async mode), without touching the network.
     *
     * @throws IllegalArgumentException naming the flag, if the global batch does not split evenly or exceeds the
     *     training set, or async mode would leave no worker
     */
    public void validate(int worldSize, int servers, List<ConvNetRun> runs) {
        int trainSize = data().train().size();
        for (ConvNetRun run : runs) {
            if (run.async() && worldSize > 1 && servers >= worldSize) {
                throw new IllegalArgumentException("the async parameter server with option servers=" + servers
                        + " leaves no worker among " + worldSize + " ranks; use at most " + (worldSize - 1)
                        + " servers");
            }
            int computing = computingRanks(run, worldSize, servers);
            if (settings.batchSize() % computing != 0) {
                throw new IllegalArgumentException("--batch-size " + settings.batchSize() + " does not split evenly"
                        + " among the " + computing + " ranks that compute gradients in " + run.label()
                        + " (world size " + worldSize + "); use a multiple of " + computing);
            }
        }
        if (settings.batchSize() > trainSize) {
            throw new IllegalArgumentException("--batch-size " + settings.batchSize() + " exceeds the " + trainSize
                    + " training images");
        }
    }

    /** The ranks that compute gradients: all, except the async servers; one rank alone trains synchronously. */
    private static int computingRanks(ConvNetRun run, int worldSize, int servers) {
        return run.async() && worldSize > 1 ? worldSize - servers : worldSize;
    }

    /**
     * Runs this rank's part of {@code run} and returns its outcome; blocks until done. Rank 0 (async: the
     * first worker) prints a start line, progress and the summary.
     *
     * @param transport an open transport of the group, borrowed (not closed here); ignored for one rank
     * @throws io.ringstar.CollectiveException if another rank fails or a wait times out
     */
    public ConvNetOutcome run(ConvNetRun run, DistributedConfig config, Transport transport) {
        int servers = AggregatorOptions.SERVERS.value(config);
        validate(config.worldSize(), servers, List.of(run));
        boolean async = run.async() && config.worldSize() > 1;
        int computing = computingRanks(run, config.worldSize(), servers);
        if (config.rank() == (async ? servers : 0)) {
            out.printf(Locale.ROOT, "train: convnet (%d parameters, Deeplearning4j) through %s; %s, %d rank%s%s, "
                    + "global batch %d (%d per %s), %d steps, lr %s, %d held-out images%n", ConvNet.PARAMETERS,
                    async ? "DataParallel, async server" : "DataParallel", run.label(), config.worldSize(),
                    config.worldSize() == 1 ? "" : "s",
                    async ? " (" + servers + " server" + (servers == 1 ? "" : "s") + ", max staleness "
                            + settings.maxStaleness() + ")" : "",
                    settings.batchSize(), settings.batchSize() / computing, async ? "worker" : "rank",
                    settings.steps(), settings.learningRate(), data().heldOut().size());
        }
        if (async) {
            return new AsyncConvNet(settings, data(), config, transport, out).train();
        }
        return new SyncConvNet(settings, run, data(), config, transport, out).train();
    }
}
