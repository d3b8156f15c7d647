package io.ringstar.internal.engine;

import io.ringstar.Deadline;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.internal.observe.CallObserver;
import io.ringstar.internal.tensor.TensorLayout;
import java.time.Duration;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The calls of a {@link io.ringstar.GradientAggregator}, out of place (new result arrays, or arrays
 * the caller passes, the inputs untouched unless they are those), over a {@link CollectiveEngine},
 * which packs tensors, numbers the collectives, bounds each by the timeout and fails the group on
 * the first failure. The star and the ring each hold one, made with their two algorithms; they
 * differ in nothing else.
 *
 * <p>Owns the engine, and through it the transport, and closes them in {@link #close()}. Each call
 * blocks until done, at most the configuration's timeout. Not thread-safe: one call at a time.
 */
public final class OutOfPlaceCollectives implements AutoCloseable {
    private static final String BROADCAST = "broadcastParams";
    private static final String REDUCE = "reduceGradients";
    private static final String REDUCE_INTO = "reduceGradientsInto";

    private final CollectiveEngine engine;
    private final Duration timeout;
    private final CollectiveEngine.Algorithm reduce;
    private final CollectiveEngine.Algorithm broadcast;
    private final CollectiveRequest.Compressible compressible;
    /** The name the flight recorder gives both calls' algorithm: the star's or the ring's. */
    private final String algorithmName;
    /** The one request of this object's calls, refilled per call, so that a call allocates none. */
    private final CollectiveRequest request = new CollectiveRequest();
    /** The checks of {@link #reduceGradientsInto}'s results, with their scratch kept from call to call. */
    private final CallerResults callerResults = new CallerResults();

    /**
     * @param config this rank's configuration; its rank and world size must match the transport's
     * @param transport an open transport for the group; owned from now on
     * @param reduce the algorithm of {@link #reduceGradients}, per window; an object made once, since a
     *     method reference made per call would allocate
     * @param broadcast the algorithm of {@link #broadcastParams}, per window, from rank 0
     * @param compressible which sparse algorithm {@code topk} compression uses for {@link #reduceGradients}
     * @throws InvalidConfigException if the transport belongs to another rank or world size, or an
     *     option has a value it does not take
     */
    public OutOfPlaceCollectives(DistributedConfig config, Transport transport, CollectiveEngine.Algorithm reduce,
            CollectiveEngine.Algorithm broadcast, CollectiveRequest.Compressible compressible) {
        this.engine = new CollectiveEngine(config, transport, "aggregator");
        this.timeout = config.timeout();
        this.reduce = reduce;
        this.broadcast = broadcast;
        this.compressible = compressible;
        this.algorithmName = compressible == CollectiveRequest.Compressible.STAR ? "star" : "ring";
    }

    /** Rank 0's {@code params}, as new arrays, on every rank. */
    public INDArray[] broadcastParams(INDArray... params) {
        INDArray[] results = start(BROADCAST, params);
        engine.run(request.newResults(BROADCAST, broadcast, layout(BROADCAST, params), params, results,
                Deadline.after(timeout)).root(0).algorithmName(algorithmName));
        return results;
    }

    /** The element-wise average of {@code grads} over all ranks, as new arrays, on every rank. */
    public INDArray[] reduceGradients(INDArray... grads) {
        INDArray[] results = start(REDUCE, grads);
        engine.run(request.newResults(REDUCE, reduce, layout(REDUCE, grads), grads, results, Deadline.after(timeout))
                .op(ReduceOp.AVG).compressible(compressible).algorithmName(algorithmName));
        return results;
    }

    /**
     * The element-wise average of {@code grads} over all ranks, on every rank, written into
     * {@code results} (see {@link io.ringstar.GradientAggregator#reduceGradientsInto}): the same
     * algorithm, windows and additions as {@link #reduceGradients}, so the same bits, with no array
     * made.
     */
    public void reduceGradientsInto(INDArray[] grads, INDArray[] results) {
        engine.checkUsable(REDUCE_INTO);
        TensorLayout layout = layout(REDUCE_INTO, grads);
        callerResults.check(REDUCE_INTO, engine.rank(), layout, grads, results);
        engine.run(request.into(REDUCE_INTO, reduce, layout, grads, results, Deadline.after(timeout))
                .op(ReduceOp.AVG).compressible(compressible).algorithmName(algorithmName));
    }

    /** This rank. */
    public int rank() {
        return engine.rank();
    }

    /** Number of ranks in the group. */
    public int worldSize() {
        return engine.worldSize();
    }

    /** Bytes held off-heap between calls: the buckets, and with compression its scratch and residuals. */
    public long bufferBytes() {
        return engine.bufferBytes();
    }

    /** Bytes of every message sent so far: headers and payloads (see {@link CollectiveEngine#bytesSent()}). */
    public long bytesSent() {
        return engine.bytesSent();
    }

    /** What watches the calls: flight recorder, statistics, listeners, dumps. */
    public CallObserver observer() {
        return engine.observer();
    }

    /** Closes the transport and frees the buffers. Idempotent. */
    @Override
    public void close() {
        engine.close();
    }

    /** The engine; tests of the compression's residuals reach it from this package. */
    CollectiveEngine engine() {
        return engine;
    }

    /** Checks that a call may start (before its tensors are read) and makes the array of its results. */
    private INDArray[] start(String operation, INDArray[] tensors) {
        engine.checkUsable(operation);
        return new INDArray[tensors == null ? 0 : tensors.length];
    }

    private TensorLayout layout(String operation, INDArray[] tensors) {
        return engine.layout(operation, tensors, TensorLayout.FLOATING_POINT);
    }
}
