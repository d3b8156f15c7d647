package io.ringstar;

import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.async.AsyncWorker;
import io.ringstar.internal.async.ParameterPartition;
import io.ringstar.internal.async.ShardServer;
import io.ringstar.internal.engine.BorrowedTransport;
import io.ringstar.internal.observe.CallObserver;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.observe.CollectiveListener;
import io.ringstar.observe.CollectiveStatistics;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Supplier;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The asynchronous parameter server: server ranks hold the parameters and apply each worker's
 * gradient as it arrives with an optimizer of their own ({@link ServerOptimizer}, such as {@link
 * SgdMomentum}); workers push gradients and pull the current parameters with their version, and
 * never wait for each other, only for the servers' replies and the staleness bound.
 *
 * <h2>Roles and sharding</h2>
 * Ranks {@code 0 … servers-1} serve (option {@value ParameterServer#SERVERS_OPTION}, {@link
 * AggregatorOptions#SERVERS}, default 1), ranks {@code servers … n-1} work; there must be at least
 * one worker. The parameters are FLOAT tensors of the shapes every rank gives, flattened in order
 * (each in 'c' order) into one vector; server {@code s} of {@code S} holds the contiguous range
 * {@code [floor(s*total/S), floor((s+1)*total/S))} of it ({@link ParameterPartition}), with the
 * optimizer state of that range, its version (updates it applied) and each worker's clock (that
 * worker's gradients it applied). A worker sends each server its range of every gradient and takes
 * each server's range of the parameters back, one transport message each way per server.
 *
 * <h2>Use</h2>
 * <pre>{@code
 * try (AsyncParameterServer ps = new AsyncParameterServer(config, transport, settings, shapes)) {
 *     if (ps.isServer()) {
 *         ps.serve(initialParameters);                  // returns once every worker finished
 *     } else {
 *         ParameterSnapshot current = ps.pull();        // where to start: current.step()
 *         for (long step = current.step(); step < steps; step++) {
 *             current = ps.push(gradients(current.parameters()));
 *         }
 *         ParameterSnapshot last = ps.finish();         // the final parameters
 *     }
 * }
 * }</pre>
 *
 * <h2>Staleness (SSP)</h2>
 * With {@link AsyncSettings#maxStaleness()} K, each server holds back its reply to a worker whose
 * clock is more than K ahead of the lowest clock among the workers that have not finished, until
 * the slowest catch up. So a worker starts step {@code t} only when every unfinished worker has
 * pushed step {@code t - K - 1}; K = 0 is lock step (a reply may already hold updates of the next
 * round from workers that went on first). The slowest worker is never held back, so the rule
 * cannot deadlock.
 *
 * <h2>Checkpoints and resume</h2>
 * With a checkpoint directory, each server saves its own state (its range, the optimizer state,
 * version, worker clocks) in {@code <directory>/server-<s>} through {@link
 * io.ringstar.checkpoint.CheckpointDirectory}: after every {@link AsyncSettings#checkpointEvery()}
 * updates it applied (under its lock, so the state agrees with itself) and when {@link #serve}
 * ends. With {@link AsyncSettings#resume()} each server restores its newest checkpoint. Servers
 * save at different moments, so their clocks for a worker may differ: the worker restarts at the
 * lowest clock any server has for it ({@link ParameterSnapshot#step()} of the first {@link #pull}),
 * and a server that has already applied a step ignores that push but still answers it. Each
 * gradient step of each worker is thus applied exactly once per range over the runs; gradients
 * computed but not yet applied when the checkpoint was taken are computed again.
 *
 * <h2>Ownership, blocking, timeouts, failures</h2>
 * Gradients are read, never modified or kept. Every {@link ParameterSnapshot} holds new arrays
 * that belong to the caller. Each call blocks until done on this rank; every wait is bounded by
 * the timeout T, the transport's {@link Transport#timeout()} (normally {@code config.timeout()},
 * from which transports are built): a server holds a reply back at most T, then fails with {@link
 * CollectiveTimeoutException} naming the slowest worker, and a worker waits for a reply at most 2T
 * (the hold-back plus the answer). A finished worker waits for the others: each server tells it
 * whenever another worker pushes or pulls, and it gives up after 2T without word.
 *
 * <p>A worker must send each server its next message (push, pull or finish) within T of that
 * server's last reply to it: the time from the first {@link #pull()} to the first push, and
 * whatever the worker does between pushes (computing the gradient, evaluating, checkpointing
 * its own state), count. Past that the server fails with {@link CollectiveTimeoutException}
 * naming the worker, and so do the other ranks. Choose T above the longest such pause.
 *
 * <p>A worker whose link dies fails the servers with
 * {@link PeerFailureException} naming it, and they tell the other workers, who fail naming it too;
 * a server that dies fails its workers naming it, and they tell the other servers. Garbage or a
 * message of the wrong kind is a {@link CollectiveMismatchException}, as are ranks with different
 * parameter counts or numbers of servers. A server's own failure (a checkpoint it cannot write,
 * an exception of the {@link ServerOptimizer}) fails it and every worker naming that server.
 * After a failure every later call fails at once.
 *
 * <h2>Threads</h2>
 * A server runs one daemon thread per worker while it serves (each worker's link used by one
 * thread per direction, as {@link Transport} requires) and ends them all before {@link #serve}
 * returns or throws (after a failure it waits 2T at most for them). Otherwise not thread-safe: one
 * thread calls an instance at a time; in particular {@link #close()} must not run while another
 * thread is blocked in a call of the same instance (a worker's close sends on the links that call
 * uses, which {@link Transport} allows one thread per direction).
 */
public final class AsyncParameterServer implements AutoCloseable {
    /** The operation named by every failure. */
    public static final String OPERATION = "async parameter server";

    private final Transport transport;
    private final int servers;
    private final long[][] shapes;
    private final ShardServer server;
    private final AsyncWorker worker;
    /** The flight recorder and statistics of this rank's pushes, pulls, finish and serve. */
    private final CallObserver observer;
    /** The parameters' layout, for the observer: every push and pull moves these tensors. */
    private final TensorLayout layout;
    private boolean closed;

    /**
     * @param config this rank's configuration (rank, world size, timeout, option {@value
     *     ParameterServer#SERVERS_OPTION}); must match the transport
     * @param transport an open transport of the group; this object owns it from now on and closes
     *     it in {@link #close()} (pass {@link Transports#borrowed} to keep it)
     * @param settings optimizer, staleness bound and checkpoints, the same on every rank
     * @param shapes the shapes of the parameter tensors, in order, the same on every rank
     * @throws InvalidConfigException if there would be no worker, or the transport is of another rank or size
     */
    public AsyncParameterServer(DistributedConfig config, Transport transport, AsyncSettings settings,
            long[]... shapes) {
        this.transport = transport;
        this.servers = AggregatorOptions.SERVERS.value(config);
        if (transport.rank() != config.rank() || transport.worldSize() != config.worldSize()) {
            throw new InvalidConfigException("transport", "rank " + transport.rank() + " of " + transport.worldSize(),
                    "must be rank " + config.rank() + " of " + config.worldSize() + " as the configuration says");
        }
        if (servers >= config.worldSize()) {
            throw new InvalidConfigException(ParameterServer.SERVERS_OPTION, servers, "leaves no worker in a world of "
                    + config.worldSize() + " ranks: the asynchronous parameter server needs at most world size - 1 "
                    + "servers");
        }
        this.shapes = Arrays.stream(shapes).map(long[]::clone).toArray(long[][]::new);
        this.layout = TensorLayout.ofShapes(ElementType.FLOAT, this.shapes);
        this.observer = new CallObserver(config, "async-server", BorrowedTransport.probeOf(transport), false);
        long total = Arrays.stream(shapes).mapToLong(AsyncWorker::elements).sum();
        if (config.rank() < servers) {
            this.server = new ShardServer(transport, servers, total, settings, OPERATION);
            this.worker = null;
        } else {
            this.server = null;
            this.worker = new AsyncWorker(transport, servers, this.shapes, OPERATION);
        }
    }

    /** Whether this rank is a server (rank below the number of servers). */
    public boolean isServer() {
        return server != null;
    }

    /** The number of server ranks. */
    public int servers() {
        return servers;
    }

    /** The number of worker ranks. */
    public int workers() {
        return transport.worldSize() - servers;
    }

    /**
     * Server ranks: serves every worker until each has called {@link #finish()}, then (with a
     * checkpoint directory) checkpoints and returns this server's counts. Blocks meanwhile; each
     * wait on a worker is bounded by the timeout.
     *
     * @param initialParameters the parameters to start from, all of them, FLOAT, read only (the
     *     server keeps a copy of its range); ignored when a checkpoint is resumed. Every server
     *     must pass the same values.
     * @throws IllegalStateException on a worker rank, or if {@code serve} was called before on this
     *     instance (the workers are not told anything then)
     * @throws IllegalArgumentException if the tensors do not have the shapes given at construction, or
     *     (with {@link AsyncSettings#resume()}) the newest checkpoint is of another run; the workers are
     *     told at once and fail naming this server
     * @throws java.io.UncheckedIOException if the checkpoint to resume from cannot be read (the workers
     *     are told the same way)
     * @throws CollectiveException naming the worker, if one fails, sends nonsense or times out; or
     *     naming no peer ({@link CollectiveException#NO_RANK}) if this server fails on its own: a
     *     checkpoint it cannot write (the cause is the I/O error) or an exception of the optimizer
     */
    public AsyncStatistics serve(INDArray... initialParameters) {
        if (server == null) {
            throw new IllegalStateException(OPERATION + " on rank " + transport.rank() + ": serve on a worker rank");
        }
        return observed("serve", () -> server.serve(() -> range(initialParameters)));
    }

    /**
     * Worker ranks: the current parameters. The first call takes the parameters every server
     * sends at the start and says where this worker starts ({@link ParameterSnapshot#step()});
     * later calls ask each server for its range.
     *
     * @throws IllegalStateException on a server rank or after {@link #finish()}
     */
    public ParameterSnapshot pull() {
        AsyncWorker pulling = requireWorker("pull");
        return observed("pull", pulling::pull);
    }

    /**
     * Worker ranks: pushes one gradient per parameter tensor (FLOAT, the parameters' shapes, any
     * order or view; read only) computed on the parameters of the last snapshot, and returns the
     * parameters each server answers with once it applied its range (and the staleness bound let it answer).
     *
     * @throws IllegalStateException on a server rank, before the first {@link #pull()} or after {@link #finish()}
     * @throws IllegalArgumentException if the gradients do not match the parameters' count or shapes
     */
    public ParameterSnapshot push(INDArray... gradients) {
        AsyncWorker pushing = requireWorker("push");
        return observed("push", () -> pushing.push(gradients));
    }

    /**
     * Worker ranks: tells the servers this worker is done and waits until every worker is, then
     * returns the final parameters. The wait starts afresh whenever a server reports progress (another
     * worker pushed, pulled or finished), and fails after twice the timeout without word from a server.
     */
    public ParameterSnapshot finish() {
        AsyncWorker finishing = requireWorker("finish");
        return observed("finish", finishing::finish);
    }

    /** This server's counts so far, or on a worker those the servers reported with their latest replies. */
    public AsyncStatistics statistics() {
        return server != null ? server.statistics() : worker.statistics();
    }

    /**
     * Per operation ({@code push}, {@code pull}, {@code finish}, {@code serve}), this rank's completed
     * calls so far: calls, bytes, median and 99th percentile time, time waiting for peers. A snapshot;
     * any thread. {@link #statistics()} keeps its own meaning (the servers' counts).
     */
    public CollectiveStatistics collectiveStatistics() {
        return observer.statistics();
    }

    /**
     * Writes this rank's flight recorder (its last {@code traceEntries} pushes, pulls and serves)
     * into {@code dir}, made if missing, as one JSON file, and returns its path; any thread, any time.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public Path dumpTrace(Path dir) {
        return observer.dumpTrace(dir, "request");
    }

    /** Adds a listener that hears every push, pull, finish and serve of this rank (see {@link CollectiveListener}). */
    public void addListener(CollectiveListener listener) {
        observer.addListener(listener);
    }

    /**
     * Closes the transport. A worker that has pulled but not finished first tells the servers, best
     * effort, so that they fail at once naming it instead of waiting for the timeout. Idempotent.
     * Not to be called while another thread is blocked in {@link #push}, {@link #pull} or {@link
     * #finish} of this instance: call it from the thread that trains, after the call returned.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (worker != null) {
            worker.abandon();
        }
        transport.close();
    }

    /** Runs one call under the observer: recorded, timed, dumped if it fails the group. */
    private <T> T observed(String operation, Supplier<T> call) {
        long sequence = observer.start(0, operation, "async", -1, layout);
        try {
            T result = call.get();
            observer.complete(sequence);
            return result;
        } catch (RuntimeException | Error e) {
            observer.fail(sequence, e);
            throw e;
        }
    }

    private AsyncWorker requireWorker(String call) {
        if (worker == null) {
            throw new IllegalStateException(OPERATION + " on rank " + transport.rank() + ": " + call
                    + " on a server rank");
        }
        return worker;
    }

    /**
     * This server's range of the initial parameters, checked against the shapes; only the tensors
     * that overlap the range are copied, and of those only the overlapping elements.
     */
    private float[] range(INDArray[] parameters) {
        if (parameters.length != shapes.length) {
            throw new IllegalArgumentException(OPERATION + " on rank " + transport.rank() + ": " + parameters.length
                    + " parameter tensors, the shapes given were " + shapes.length);
        }
        for (int i = 0; i < parameters.length; i++) {
            if (!Arrays.equals(parameters[i].shape(), shapes[i])) {
                throw new IllegalArgumentException(OPERATION + " on rank " + transport.rank() + ": parameter " + i
                        + " has shape " + Arrays.toString(parameters[i].shape()) + ", the shape given was "
                        + Arrays.toString(shapes[i]));
            }
        }
        long from = server.offset();
        long to = from + server.length();
        float[] range = new float[server.length()];
        long at = 0;
        for (INDArray tensor : parameters) {
            long elements = AsyncWorker.elements(tensor.shape());
            long first = Math.max(at, from);
            long last = Math.min(at + elements, to);
            if (first < last) {
                copyElements(tensor, first - at, range, Math.toIntExact(first - from), Math.toIntExact(last - first));
            }
            at += elements;
        }
        return range;
    }

    /** Copies {@code count} elements of {@code tensor} ('c' order, as FLOAT) from {@code first} into {@code into}. */
    private static void copyElements(INDArray tensor, long first, float[] into, int at, int count) {
        INDArray floats = tensor.dataType() == DataType.FLOAT ? tensor : tensor.castTo(DataType.FLOAT);
        INDArray linear = TensorMemory.linearInCOrder(floats);
        try {
            // The tensor's memory in native order, as the workers write gradients.
            TensorMemory.bytes(linear, 4 * first, 4 * count).order(ByteOrder.nativeOrder()).asFloatBuffer()
                    .get(into, at, count);
        } finally {
            TensorMemory.closeIfCopy(floats, linear);
            TensorMemory.closeIfCopy(tensor, floats);
        }
    }
}
