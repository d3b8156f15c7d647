package io.ringstar.dl4j;

import io.ringstar.AsyncParameterServer;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterSnapshot;
import io.ringstar.internal.dl4j.TrainedNetwork;
import org.deeplearning4j.nn.api.OptimizationAlgorithm;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * Data-parallel training of a Deeplearning4j network through ringstar: each rank trains its own
 * copy of the network with the network's own {@code fit}, on its own shard of the data, and the
 * ranks' gradients are averaged at every step, so that every rank applies the same update.
 *
 * <h2>Synchronous: {@link #attach(MultiLayerNetwork, GradientAggregator)}</h2>
 * <pre>{@code
 * MultiLayerNetwork net = new MultiLayerNetwork(conf);
 * net.init();
 * try (GradientAggregator aggregator = new AllReduceAggregator(config, Transports.open(config))) {
 *     DataParallel.attach(net, aggregator);           // every rank now holds rank 0's network
 *     DataSetIterator shard = DataParallel.shard(globalBatches, config.rank(), config.worldSize());
 *     net.fit(shard, epochs);                           // each step averages the gradients
 * }
 * }</pre>
 * Attaching makes every rank's parameters, updater state (Adam's moments, momentum) and step and
 * epoch counters (which schedules and Adam's bias correction read) those of rank 0, with one
 * {@link GradientAggregator#broadcastParams} call; then a {@link TrainingListener} replaces, at every
 * step, the flattened gradients with their average over the ranks, in place
 * ({@link GradientAggregator#reduceGradientsInto}, no copy of the gradients), after DL4J computed them
 * and before the updater reads them ({@link TrainingListener#onGradientCalculation}). The aggregator's
 * results are bit-identical on every rank, so every rank's updater makes the same update from the
 * same state, and the parameters stay bit-identical across ranks, with the star and with the ring.
 * With each rank's batch of {@code b} examples, a step equals one step of a single process on the
 * {@code N * b} examples of all the ranks' batches (DL4J divides the summed gradient by the local
 * batch size {@code b}, unless the configuration sets {@code miniBatch(false)}), except where a layer
 * depends on the batch itself: BatchNormalization normalizes by each rank's own batch statistics,
 * and dropout draws each rank's own masks.
 *
 * <h2>What is supported</h2>
 * DL4J's default optimization, {@code STOCHASTIC_GRADIENT_DESCENT} (with any updater), and standard
 * backpropagation. Line-search optimizers (LBFGS, conjugate gradient, line gradient descent) score
 * each rank's own batch where no listener runs, and truncated BPTT makes one update per segment, so
 * the ranks would drift apart unnoticed: {@code attach} refuses both with
 * {@link IllegalArgumentException}.
 *
 * <h2>What every rank must keep equal</h2>
 * The same network (layers, parameter count, updater), the same batch size at every step, and the
 * same number of steps in every epoch; {@link #shard} gives each rank that. A rank that disagrees
 * does not average unlike things and does not hang: each step's call carries an empty marker whose
 * shape holds the rank's batch size, and the end of each epoch of {@code fit(iterator)} makes a check call of another
 * tensor count, so ranks whose batch sizes differ at a step, or one still training while another
 * ends its epoch, all fail in that call with a {@link io.ringstar.CollectiveMismatchException}
 * whose message names the step, as in {@code "DataParallel step 17 (epoch 0) on rank 2: ..."}
 * (the end of an epoch is named {@code "DataParallel end of epoch 0 at step 17"}). The
 * aggregator's other failures (a peer that left, a timeout) come with the step too, of the same
 * type, the aggregator's exception as the cause; the group is broken then, as after any failure
 * of the aggregator. A rank that simply stops calling {@code fit} while the others go on leaves
 * them to fail by the aggregator's timeout.
 *
 * <h2>Asynchronous: {@link #attach(MultiLayerNetwork, AsyncParameterServer)}</h2>
 * <pre>{@code
 * try (AsyncParameterServer server = new AsyncParameterServer(config, transport, settings, net.params().shape())) {
 *     if (server.isServer()) {
 *         server.serve(net.params());                  // until every worker has finished
 *     } else {
 *         DataParallel.attach(net, server);            // takes the servers' parameters
 *         net.fit(shard, epochs);                       // each step: push, install the reply
 *         DataParallel.finish(net, server);            // the final parameters
 *     }
 * }
 * }</pre>
 * The servers hold the parameters and update them with their own optimizer ({@link
 * io.ringstar.AsyncSettings}); the network's updater must therefore be {@code NoOp} on every
 * parameter (anything else is refused with {@link IllegalArgumentException}, because its work would be
 * thrown away and a stateful one would mislead). After each step the worker pushes the gradient as
 * DL4J prepared it for the updater (divided by the batch size, with the network's regularization and
 * gradient normalization applied) and installs the parameters the servers answer with. The
 * servers need every worker's next message within their timeout (see {@link AsyncParameterServer}):
 * start {@code fit} promptly after attaching, and keep the time between steps below it.
 * BatchNormalization's running statistics pass through the servers' optimizer like any parameter.
 * Layer constraints (max-norm and the like) are not supported there: DL4J applies them after the
 * step, to the parameters just installed from the servers, which never see them.
 *
 * <h2>Ownership, blocking, threads</h2>
 * The aggregator or server stays the caller's: DataParallel never closes it. The caller may call the
 * aggregator between steps only where every rank does the same, since the ranks' calls must pair
 * up one for one. Attaching blocks in one collective; each step then blocks in the aggregator (or the
 * server) for at most its timeout, and failures are thrown out of the network's {@code fit}. A
 * network is attached to one aggregator or server at a time. Like the network itself and the
 * aggregator, none of this is thread-safe: one thread trains a network.
 */
public final class DataParallel {
    private DataParallel() {
    }

    /**
     * Makes {@code net} rank 0's (parameters, updater state, step and epoch counters) on every rank,
     * then averages its gradients over the ranks at every step of its {@code fit}. Every rank calls
     * this at the same point, with the same network structure.
     *
     * @param net an initialized network ({@code init()} called); its listeners are kept
     * @param aggregator the group to average over; stays the caller's
     * @throws IllegalArgumentException if the network is not initialized, or optimizes otherwise than
     *     by stochastic gradient descent, or trains with truncated BPTT
     * @throws IllegalStateException if the network is already attached
     * @throws io.ringstar.CollectiveException if the ranks' networks differ or the group fails; the
     *     network is then left as it was
     */
    public static void attach(MultiLayerNetwork net, GradientAggregator aggregator) {
        attachSynchronous(new TrainedNetwork(net, "DataParallel"), aggregator);
    }

    /** {@link #attach(MultiLayerNetwork, GradientAggregator)} for a {@link ComputationGraph}. */
    public static void attach(ComputationGraph net, GradientAggregator aggregator) {
        attachSynchronous(new TrainedNetwork(net, "DataParallel"), aggregator);
    }

    /**
     * On a worker rank of an asynchronous parameter server: installs the servers' current parameters
     * in {@code net}, then after every step of its {@code fit} pushes the step's gradient to the
     * servers and installs the parameters they answer with. Call {@link #finish(MultiLayerNetwork,
     * AsyncParameterServer)} when done. The server ranks call {@code server.serve(net.params())}
     * instead, with the network every rank builds the same way.
     *
     * @param net an initialized network whose updater is {@code NoOp} on every parameter
     * @param server built with {@code net.params().shape()} as its only shape; stays the caller's
     * @throws IllegalArgumentException on a server rank, or if the updater is not NoOp everywhere, or
     *     the server holds another number of parameters
     * @throws IllegalStateException if the network is already attached
     */
    public static void attach(MultiLayerNetwork net, AsyncParameterServer server) {
        attachAsynchronous(new TrainedNetwork(net, "DataParallel"), server);
    }

    /** {@link #attach(MultiLayerNetwork, AsyncParameterServer)} for a {@link ComputationGraph}. */
    public static void attach(ComputationGraph net, AsyncParameterServer server) {
        attachAsynchronous(new TrainedNetwork(net, "DataParallel"), server);
    }

    /**
     * On a worker rank: detaches {@code net} from {@code server}, tells the servers this worker is
     * done, waits until every worker is ({@link AsyncParameterServer#finish()}) and installs the final
     * parameters in {@code net}.
     *
     * @return the final parameters with their version, new arrays that belong to the caller
     * @throws IllegalStateException if {@code net} is not attached to an asynchronous parameter server
     */
    public static ParameterSnapshot finish(MultiLayerNetwork net, AsyncParameterServer server) {
        return finishAsynchronous(new TrainedNetwork(net, "DataParallel"), server);
    }

    /** {@link #finish(MultiLayerNetwork, AsyncParameterServer)} for a {@link ComputationGraph}. */
    public static ParameterSnapshot finish(ComputationGraph net, AsyncParameterServer server) {
        return finishAsynchronous(new TrainedNetwork(net, "DataParallel"), server);
    }

    /**
     * Removes what {@code attach} added, so that {@code net} trains on its own again; its parameters
     * stay as they are. Local: no collective. Does nothing if the network is not attached. (A worker
     * of the asynchronous server calls {@link #finish(MultiLayerNetwork, AsyncParameterServer)}
     * instead, which detaches too.)
     */
    public static void detach(MultiLayerNetwork net) {
        detachAll(new TrainedNetwork(net, "DataParallel"));
    }

    /** {@link #detach(MultiLayerNetwork)} for a {@link ComputationGraph}. */
    public static void detach(ComputationGraph net) {
        detachAll(new TrainedNetwork(net, "DataParallel"));
    }

    /**
     * This rank's shard of {@code source}: each batch of {@code worldSize * b} examples that the
     * source gives, where {@code b = source.batch() / worldSize}, is cut into {@code worldSize}
     * contiguous slices of {@code b} examples, and rank {@code r} gets slice {@code r} (a copy, masks
     * included). So {@code N} ranks with batches of {@code b} see together exactly the global batches
     * a single process with the source's batches of {@code N * b} sees, in the same order, and every
     * rank gets the same number of batches, all of {@code b} examples.
     *
     * <p>What is dropped, on every rank alike: the examples of each source batch past {@code
     * worldSize * b} (when the source's batch size is not a multiple of the world size), and every
     * source batch with fewer than {@code worldSize * b} examples (normally the source's last, short
     * batch). Every rank must build the same source, in the same order (same shuffling seed); each
     * rank reads all of it and keeps its slices. {@code reset()} resets the source, so the shard
     * serves as many epochs as the source does; a preprocessor set on the shard runs on each slice.
     * {@code asyncSupported()} is false (DL4J then reads on the training thread): wrap the source in
     * DL4J's {@code AsyncDataSetIterator} if reading it is slow.
     *
     * @param source the global batches, read by the returned iterator from now on
     * @throws IllegalArgumentException if {@code rank} is not in {@code [0, worldSize)}, or the
     *     source's batch size is below {@code worldSize}
     */
    public static DataSetIterator shard(DataSetIterator source, int rank, int worldSize) {
        return new ShardedDataSetIterator(source, rank, worldSize);
    }

    private static void attachSynchronous(TrainedNetwork network, GradientAggregator aggregator) {
        if (aggregator == null) {
            throw new IllegalArgumentException("DataParallel.attach: the aggregator is null");
        }
        requireStepwiseTraining(network, "DataParallel.attach");
        requireDetached(network);
        GradientAveraging averaging = new GradientAveraging(network, aggregator);
        averaging.takeRankZerosState();
        network.addListener(averaging);
    }

    private static void attachAsynchronous(TrainedNetwork network, AsyncParameterServer server) {
        if (server == null) {
            throw new IllegalArgumentException("DataParallel.attach: the parameter server is null");
        }
        requireStepwiseTraining(network, "DataParallel.attach");
        requireDetached(network);
        AsyncWorkerSteps steps = new AsyncWorkerSteps(network, server);
        steps.start();
        network.addListener(steps);
    }

    private static ParameterSnapshot finishAsynchronous(TrainedNetwork network, AsyncParameterServer server) {
        AsyncWorkerSteps steps = network.listeners().stream().filter(AsyncWorkerSteps.class::isInstance)
                .map(AsyncWorkerSteps.class::cast).filter(listener -> listener.server() == server).findFirst()
                .orElseThrow(() -> new IllegalStateException("DataParallel.finish: the network is not attached to "
                        + "this asynchronous parameter server"));
        network.removeListeners(AsyncWorkerSteps.class);
        return steps.finish();
    }

    /**
     * Refuses what DataParallel cannot keep in step: an optimizer other than stochastic gradient
     * descent, whose line search scores each rank's own batch outside the averaged step (no listener
     * runs there), so the ranks would choose different step sizes and drift apart unnoticed; and
     * truncated BPTT, whose number of updates per batch follows each rank's sequence length.
     */
    private static void requireStepwiseTraining(TrainedNetwork network, String operation) {
        OptimizationAlgorithm algorithm = network.model().conf().getOptimizationAlgo();
        if (algorithm != OptimizationAlgorithm.STOCHASTIC_GRADIENT_DESCENT) {
            throw new IllegalArgumentException(operation + ": the network optimizes with " + algorithm
                    + ", whose line search scores each rank's own batch outside the averaged step, so the ranks"
                    + " would drift apart; DataParallel supports STOCHASTIC_GRADIENT_DESCENT (DL4J's default)");
        }
        if (network.truncatedBackprop()) {
            throw new IllegalArgumentException(operation + ": the network trains with truncated BPTT, which makes"
                    + " one update per segment, so ranks whose sequences differ in length would average unlike"
                    + " steps; use BackpropType.Standard");
        }
    }

    private static void requireDetached(TrainedNetwork network) {
        if (network.hasListener(GradientAveraging.class) || network.hasListener(AsyncWorkerSteps.class)) {
            throw new IllegalStateException("DataParallel.attach: the network is attached already; detach it first");
        }
    }

    private static void detachAll(TrainedNetwork network) {
        network.removeListeners(GradientAveraging.class);
        network.removeListeners(AsyncWorkerSteps.class);
    }
}
