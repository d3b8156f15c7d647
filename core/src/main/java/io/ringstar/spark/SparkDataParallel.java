package io.ringstar.spark;

import io.ringstar.InvalidConfigException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.spark.api.java.JavaRDD;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.dataset.DataSet;

/**
 * Trains a Deeplearning4j network data-parallel on a Spark cluster: each partition of an RDD of
 * minibatches is one rank of a {@link SparkRanks} job, which trains a copy of the network through
 * {@link io.ringstar.dl4j.DataParallel}, and the trained state comes back into the network.
 *
 * <pre>{@code
 * JavaRDD<DataSet> minibatches = ...;              // one DataSet per minibatch; partition r is rank r
 * SparkDataParallel.fit(net, minibatches, 5);      // net now holds the trained parameters
 * SparkDataParallel.fit(net, minibatches, 5, Map.of("aggregator", "star", "checkpointDir", "/shared/ckpt"));
 * }</pre>
 *
 * <h2>What happens</h2>
 * The driver's network (configuration, parameters, updater state, and the iteration and epoch
 * counters that schedules and Adam's bias correction read), as DL4J's {@code ModelSerializer} writes
 * it, goes to every rank with the task. Each rank reads its partition, attaches its copy to
 * {@link io.ringstar.dl4j.DataParallel} (which makes every rank's state rank 0's, then averages the
 * gradients at every step) and fits it: the {@code k}-th minibatch of partition {@code r} is rank
 * {@code r}'s part of global step {@code k}, and the {@code epochs} passes all run in one Spark
 * stage, in the partitions' order every epoch (shuffle the RDD beforehand if you want another
 * order; it is not reshuffled between epochs). At the end of each pass the epoch counter advances,
 * as the network's own {@code fit(iterator)} advances it. Rank 0's trained parameters, updater
 * state and counters are then set into {@code net} in place: the same object, its listeners and
 * its arrays' identities kept. For a network without batch-dependent layers (BatchNormalization,
 * dropout: see {@link io.ringstar.dl4j.DataParallel}) this equals one process fitting, at each step,
 * the concatenation of the ranks' minibatches of that step. Every rank ends with bit-identical
 * parameters and updater state ({@link SparkFitSummary#ranksAgree()}).
 *
 * <h2>Unequal partitions</h2>
 * Every rank must train on minibatches of one size, and make as many steps: what differs is
 * evened as {@link io.ringstar.dl4j.DataParallel#shard} evens a source's batches, on every rank
 * alike. The minibatch size {@code b} is the smallest, over the partitions, of each one's largest
 * minibatch; a minibatch of fewer examples (normally a partition's short last one) is skipped, one
 * of more is cut to its first {@code b}; an epoch has as many steps as the partition with fewest
 * such minibatches, and the surplus of the others is dropped. {@link SparkFitSummary} says how
 * many examples of each partition were dropped. The ranks exchange their counts with collectives
 * before training, so they all decide alike: an empty partition is refused on every rank with an
 * {@link InvalidConfigException} that names it, which {@code fit} throws.
 *
 * <h2>Memory</h2>
 * Each rank reads its partition once, into memory, and keeps it for the whole stage, so the RDD is
 * computed once per fit and not once per epoch. That costs each executor, for every partition it
 * runs, the partition's minibatches as ND4J holds them (features, labels and masks, off the Java
 * heap: about {@code examples * (features + labels) * 4} bytes in float32), on top of the network
 * (parameters, gradients and updater state, plus the serialized network the task carries) for the
 * whole fit. A cached RDD adds Spark's own copy unless it is cached deserialized in memory
 * ({@code MEMORY_ONLY}), whose objects are then the very ones the rank reads: {@code fit} never
 * changes or closes them. Rank 0 sends its parameters and updater state back to the driver as the
 * task's result, which must fit in {@code spark.driver.maxResultSize}.
 *
 * <h2>Options</h2>
 * {@code fit}'s own, read and checked on the driver:
 * <ul>
 *   <li>{@code aggregator}: {@code ring} ({@link io.ringstar.AllReduceAggregator}, the
 *       default) or {@code star} ({@link io.ringstar.ParameterServer}; its option
 *       {@value io.ringstar.ParameterServer#SERVERS_OPTION} sets how many ranks serve);</li>
 *   <li>{@code checkpointDir}: a folder that every executor sees (a shared file
 *       system), where rank 0 saves checkpoints; none by default;</li>
 *   <li>{@code checkpointEvery}: a checkpoint after every this many steps (counted
 *       over the whole fit, epochs included) and after the last; default
 *       100;</li>
 *   <li>{@code resume}: {@code true} to resume even a first attempt from the newest
 *       checkpoint in the folder (a fit started again after its driver was lost, with the same data
 *       and network); default {@code false}.</li>
 * </ul>
 * Every other option goes to {@link SparkRanks#run}: {@code transport}, {@code timeout} and the
 * transports' and core's options.
 *
 * <h2>Checkpoints and a retried stage</h2>
 * With {@code checkpointDir}, rank 0 saves the parameters, updater state and counters
 * ({@link io.ringstar.checkpoint.CheckpointDirectory}, the newest two kept); the other ranks wait in
 * their next step meanwhile. When Spark runs the stage again after an executor was lost
 * ({@link SparkRanks#stageAttempt()} above 0), rank 0 reads the newest checkpoint of this fit,
 * broadcasts its step, installs it, and every rank skips the minibatches already trained, so the
 * final parameters equal an uninterrupted run's. The resumed step is logged and returned in
 * {@link SparkFitSummary#resumedFromStep()}. This needs an RDD that gives the same partitions when
 * Spark computes it again (deterministic, or checkpointed); a checkpoint whose ranks, steps or
 * minibatch size differ from the retried stage's is refused with a message naming the difference.
 *
 * <h2>Blocking, failures, what stays on the driver</h2>
 * Blocks until the stage has ended. Reading a partition may take as long as the RDD needs: the
 * ranks then meet at Spark's barrier ({@code spark.barrier.sync.timeout}; it costs about a second,
 * as Spark polls for its end once a second), and every collective afterwards waits at most the
 * option {@code timeout}. A rank that fails fails the call with the {@link SparkRankException} of
 * {@link SparkRanks#run}, and {@code net} is left as it was. The network's listeners stay on the
 * driver and do not run during the fit; the summary reports the losses instead. The network must
 * train by stochastic gradient descent without truncated BPTT (as {@link io.ringstar.dl4j.DataParallel}
 * requires); a {@link ComputationGraph} must have one input and one output, as a {@link DataSet}
 * feeds. Not thread-safe for one network: one fit at a time.
 */
public final class SparkDataParallel {
    private static final System.Logger LOG = System.getLogger(SparkDataParallel.class.getName());

    private SparkDataParallel() {
    }

    /** {@link #fit(MultiLayerNetwork, JavaRDD, int, Map)} with no options: the ring, no checkpoints. */
    public static MultiLayerNetwork fit(MultiLayerNetwork net, JavaRDD<DataSet> data, int epochs) {
        return fit(net, data, epochs, Map.of());
    }

    /**
     * Trains {@code net} for {@code epochs} passes over {@code data}, one rank per partition (see the
     * class comment).
     *
     * @param net an initialized network ({@code init()} called)
     * @param data one minibatch per element; partition {@code r} is rank {@code r}'s data
     * @param epochs the passes over the data; 1 or more
     * @param options {@code fit}'s own and {@link SparkRanks#run}'s, by name
     * @return {@code net}, now holding the trained parameters, updater state and counters
     * @throws IllegalArgumentException if {@code net} is not initialized or {@code epochs} is below 1
     * @throws InvalidConfigException before anything is trained, for an option or a cluster that does
     *     not fit the job, or an empty partition (naming it)
     * @throws SparkRankException if a rank failed: the rank and its exception
     */
    public static MultiLayerNetwork fit(MultiLayerNetwork net, JavaRDD<DataSet> data, int epochs,
            Map<String, String> options) {
        fitWithSummary(net, data, epochs, options);
        return net;
    }

    /** {@link #fit(ComputationGraph, JavaRDD, int, Map)} with no options: the ring, no checkpoints. */
    public static ComputationGraph fit(ComputationGraph net, JavaRDD<DataSet> data, int epochs) {
        return fit(net, data, epochs, Map.of());
    }

    /** {@link #fit(MultiLayerNetwork, JavaRDD, int, Map)} for a {@link ComputationGraph} of one input and output. */
    public static ComputationGraph fit(ComputationGraph net, JavaRDD<DataSet> data, int epochs,
            Map<String, String> options) {
        fitWithSummary(net, data, epochs, options);
        return net;
    }

    /**
     * {@link #fit(MultiLayerNetwork, JavaRDD, int, Map)}, returning what it did instead of the
     * network (which it trains in place all the same). The summary is also logged at INFO.
     */
    public static SparkFitSummary fitWithSummary(MultiLayerNetwork net, JavaRDD<DataSet> data, int epochs,
            Map<String, String> options) {
        return run(SparkNetwork.of(net), data, epochs, options);
    }

    /** {@link #fitWithSummary(MultiLayerNetwork, JavaRDD, int, Map)} for a {@link ComputationGraph}. */
    public static SparkFitSummary fitWithSummary(ComputationGraph net, JavaRDD<DataSet> data, int epochs,
            Map<String, String> options) {
        return run(SparkNetwork.of(net), data, epochs, options);
    }

    private static SparkFitSummary run(SparkNetwork network, JavaRDD<DataSet> data, int epochs,
            Map<String, String> options) {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(options, "options");
        if (epochs < 1) {
            throw new IllegalArgumentException("SparkDataParallel.fit: epochs must be 1 or more, was " + epochs);
        }
        FitSettings settings = FitSettings.of(options);
        byte[] written;
        try {
            written = network.write();
        } catch (IOException e) {
            throw new UncheckedIOException("SparkDataParallel.fit: cannot write the network for the ranks: " + e, e);
        }
        // Once per call: a retried stage recognises its own checkpoints by it.
        String fitId = UUID.randomUUID().toString();
        long start = System.nanoTime();
        List<RankOutcome> outcomes;
        try {
            outcomes = SparkRanks.run(data, FitSettings.rankOptions(options),
                    new FitTask(network.kind(), written, epochs, settings, fitId));
        } catch (SparkRankException e) {
            if (e.getCause() instanceof InvalidConfigException refused) {
                // Refused by the ranks alike (an empty partition, a checkpoint of another run): say so as such.
                InvalidConfigException again = new InvalidConfigException(refused.field(), refused.value(),
                        refused.requirement(), refused.origin());
                again.addSuppressed(e);
                throw again;
            }
            throw e;
        }
        outcomes.get(0).state().install(network);
        SparkFitSummary summary = SparkFitSummary.of(settings.aggregator().label(), epochs, outcomes,
                Duration.ofNanos(System.nanoTime() - start));
        LOG.log(summary.ranksAgree() ? System.Logger.Level.INFO : System.Logger.Level.WARNING, summary::describe);
        return summary;
    }
}
