package io.ringstar;

import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.algorithm.DirectReduce;
import io.ringstar.internal.algorithm.RecursiveDoubling;
import io.ringstar.internal.algorithm.RingAllReduce;
import io.ringstar.internal.algorithm.RingBroadcast;
import io.ringstar.internal.algorithm.StarReduce;
import io.ringstar.internal.engine.CollectiveEngine;
import io.ringstar.internal.engine.CollectiveQueue;
import io.ringstar.internal.engine.CollectiveRequest;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.CollectiveListener;
import io.ringstar.observe.CollectiveStatistics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The general collectives of one rank of a group, in place, as torch.distributed and MPI give
 * them: all-reduce with any {@link ReduceOp}, broadcast from any root, reduce to a root,
 * all-gather, reduce-scatter and barrier, blocking or not.
 *
 * <p><b>Types and tensors.</b> FLOAT, DOUBLE, HALF, BFLOAT16, INT and LONG, mixed freely in one
 * call; any shape (scalars and empty arrays too), either order, and views. The tensors of one type
 * that are one array laid out in 'c' order are worked on where they lie; others are packed into one
 * buffer per type and copied back. HALF and BFLOAT16 are combined in float32 and rounded to their
 * type once per value sent (see {@link io.ringstar.internal.tensor.Reduction#combine} for the error bound).
 * {@link ReduceOp#AVG} of INT or LONG is refused with {@link IllegalArgumentException} before
 * anything is sent.
 *
 * <p><b>Rules.</b> Every rank issues the same collectives in the same order, with the same op,
 * root, types and shapes; a rank that does not gets a {@link CollectiveMismatchException}, and so
 * do its peers. Results are bit-identical on every rank. Each call waits at most the configured
 * timeout; the first failure (a dead peer, a mismatch, a timeout) fails the communicator, and every
 * later call throws an exception of the same type with that failure as its cause. Errors name the
 * operation, this rank and the peer. Argument errors ({@link IllegalArgumentException}) are thrown
 * before anything is sent and leave the communicator usable.
 *
 * <p><b>Non-blocking calls</b> ({@link #allReduceAsync}, {@link #broadcastAsync}) return a
 * {@link CollectiveHandle} at once; the collective runs on the communicator's background thread,
 * after those issued before it, and its tensors belong to it until the handle is done. A blocking
 * call issued while non-blocking ones are in flight waits for them, then runs. Issue calls from one
 * thread at a time.
 *
 * <p><b>Algorithms.</b> All-reduce picks by size: {@link #ALGORITHM_DOUBLING} (recursive
 * doubling: about log2(n) exchanges of the whole message) up to {@link #SMALL_MESSAGE_BYTES}, the
 * bandwidth-optimal {@link #ALGORITHM_RING} above; option {@value #ALGORITHM_OPTION} forces one
 * (or {@link #ALGORITHM_STAR}, through rank 0). Broadcast is a pipelined chain from the root,
 * reduce streams to the root, all-gather and reduce-scatter are rings, barrier is a recursive
 * doubling of empty messages. {@code ALGORITHMS.md} gives each one's steps and bytes on the wire.
 *
 * <p><b>Compression.</b> Option {@value AggregatorOptions#COMPRESSION_OPTION} ({@code none},
 * {@code fp16}, {@code bf16}, {@code topk:F}) applies to {@link #allReduce} with SUM or AVG of FLOAT
 * and DOUBLE tensors only: fp16 and bf16 run the chosen algorithm on values rounded to 16 bits and
 * summed in float32 (error bound: {@code (n+1) u (|x_1| + ... + |x_n|)}, u = 2^-11 or 2^-8, u + 2^-24
 * for DOUBLE inputs; divided by n, plus 2^-25, for AVG); top-k gathers every rank's pairs around a
 * ring whatever {@value #ALGORITHM_OPTION} says ({@link io.ringstar.internal.algorithm.TopKAllReduce}) and
 * keeps what was not sent, per tensor layout, for the next call. Other ops and types, and every other
 * collective, are never compressed. {@link #bytesSent()} counts what this rank sent.
 *
 * <p>Owns its transport and closes it in {@link #close()}.
 */
public final class Communicator implements AutoCloseable {
    /** Option naming the all-reduce algorithm: {@value #ALGORITHM_AUTO} (default), or one forced. */
    public static final String ALGORITHM_OPTION = "allReduceAlgorithm";
    /** Recursive doubling up to {@link #SMALL_MESSAGE_BYTES} per element type, the ring above. */
    public static final String ALGORITHM_AUTO = "auto";
    /** Pipelined ring: reduce-scatter then all-gather; each rank sends 2(n-1)/n of the data. */
    public static final String ALGORITHM_RING = "ring";
    /** Recursive doubling: ceil(log2 n) (+2 if n is not a power of two) exchanges of all the data. */
    public static final String ALGORITHM_DOUBLING = "doubling";
    /** Through rank 0, which reduces every rank's data and sends the result back. */
    public static final String ALGORITHM_STAR = "star";
    /** Largest all-reduce (bytes of one element type) that {@link #ALGORITHM_AUTO} gives recursive doubling. */
    public static final long SMALL_MESSAGE_BYTES = 64 << 10;

    private static final String ALL_REDUCE = "allReduce";
    private static final String BROADCAST = "broadcast";
    private static final String REDUCE = "reduce";
    private static final String ALL_GATHER = "allGather";
    private static final String REDUCE_SCATTER = "reduceScatter";
    private static final String BARRIER = "barrier";
    private static final String MONITORED_BARRIER = "monitoredBarrier";
    private static final String RING = ALGORITHM_RING;

    private final CollectiveEngine engine;
    private final CollectiveQueue queue;
    private final Transport transport;
    private final String algorithm;
    /**
     * The one request of this communicator's calls, refilled by the thread that runs each (the
     * caller's, or the background thread's for a queued call: one at a time either way).
     */
    private final CollectiveRequest request = new CollectiveRequest();
    private boolean closed;

    /**
     * A communicator over an open transport.
     *
     * @param config this rank's configuration; its rank and world size must match the transport's
     * @param transport an open transport for the group; the communicator owns it from now on
     * @throws InvalidConfigException if the transport belongs to another rank or world size, or an
     *     option has a value it does not take
     */
    public Communicator(DistributedConfig config, Transport transport) {
        this.engine = new CollectiveEngine(config, transport, "communicator");
        this.transport = transport;
        this.algorithm = AggregatorOptions.ALL_REDUCE_ALGORITHM.value(config);
        this.queue = new CollectiveQueue(config.rank());
    }

    /**
     * Opens the transport that {@code config} names ({@link Transports#open}) and a communicator
     * over it. Blocks until the group has formed, at most the configured timeout.
     */
    public static Communicator open(DistributedConfig config) {
        Transport transport = Transports.open(config);
        try {
            return new Communicator(config, transport);
        } catch (RuntimeException e) {
            transport.close();
            throw e;
        }
    }

    /**
     * Bytes this rank has sent so far in the communicator's collectives: every message's 64-byte
     * header and payload (not the transport's own framing). Read it before and after a call, with no
     * non-blocking collective in flight, for the bytes the call put on the wire from this rank.
     */
    public long bytesSent() {
        return engine.bytesSent();
    }

    /** This rank, in {@code [0, worldSize())}. */
    public int rank() {
        return engine.rank();
    }

    /** Number of ranks in the group. */
    public int worldSize() {
        return engine.worldSize();
    }

    /**
     * Reduces {@code tensors} over all ranks with {@code op}, in place: on return every rank's
     * tensors hold the reduction, bit-identical on every rank.
     *
     * @throws IllegalArgumentException for a null op or tensor, an unsupported type, or AVG of an integer type
     */
    public void allReduce(ReduceOp op, INDArray... tensors) {
        Deadline deadline = deadlineFromNow();
        TensorLayout layout = checkedLayout(ALL_REDUCE, op, tensors);
        blocking(ALL_REDUCE, deadline, () -> runAllReduce(op, layout, tensors, deadline, 0));
    }

    /** {@link #allReduce} without waiting: the tensors belong to the collective until its handle is done. */
    public CollectiveHandle allReduceAsync(ReduceOp op, INDArray... tensors) {
        Deadline deadline = deadlineFromNow();
        TensorLayout layout = checkedLayout(ALL_REDUCE, op, tensors);
        // The collective keeps the tensors, not the caller's array, which the caller may reuse at once.
        INDArray[] kept = tensors.clone();
        long issued = engine.issue(ALL_REDUCE, allReduceAlgorithm(layout), MessageHeader.NO_ROOT, layout);
        return submit(ALL_REDUCE, issued, deadline, () -> runAllReduce(op, layout, kept, deadline, issued));
    }

    /**
     * Copies {@code root}'s tensors into every rank's, in place; the root's are only read.
     *
     * @throws IllegalArgumentException for a root out of range, a null tensor or an unsupported type
     */
    public void broadcast(int root, INDArray... tensors) {
        Deadline deadline = deadlineFromNow();
        TensorLayout layout = checkedLayout(BROADCAST, null, tensors);
        checkRoot(BROADCAST, root);
        blocking(BROADCAST, deadline, () -> runBroadcast(root, layout, tensors, deadline, 0));
    }

    /** {@link #broadcast} without waiting: the tensors belong to the collective until its handle is done. */
    public CollectiveHandle broadcastAsync(int root, INDArray... tensors) {
        Deadline deadline = deadlineFromNow();
        TensorLayout layout = checkedLayout(BROADCAST, null, tensors);
        checkRoot(BROADCAST, root);
        INDArray[] kept = tensors.clone();
        long issued = engine.issue(BROADCAST, RING, root, layout);
        return submit(BROADCAST, issued, deadline, () -> runBroadcast(root, layout, kept, deadline, issued));
    }

    /**
     * Reduces {@code tensors} over all ranks with {@code op} into {@code root}'s tensors, in place;
     * the other ranks' tensors are left unchanged. Returns on every rank once the root has the result.
     *
     * @throws IllegalArgumentException as {@link #allReduce}, or for a root out of range
     */
    public void reduce(int root, ReduceOp op, INDArray... tensors) {
        Deadline deadline = deadlineFromNow();
        TensorLayout layout = checkedLayout(REDUCE, op, tensors);
        checkRoot(REDUCE, root);
        blocking(REDUCE, deadline, () -> {
            engine.run(request.inPlace(REDUCE, DirectReduce::run, layout, tensors, deadline).op(op).root(root)
                    .writeResults(rank() == root).algorithmName("direct"));
            return null;
        });
    }

    /**
     * Every rank's {@code tensor}, in rank order: a new 'c'-order array of shape
     * {@code [worldSize, ...tensor.shape()]} and the tensor's type, owned by the caller.
     *
     * @throws IllegalArgumentException for a null tensor, an unsupported type, or a result over 2 GiB
     */
    public INDArray allGather(INDArray tensor) {
        Deadline deadline = deadlineFromNow();
        INDArray[] tensors = {tensor};
        TensorLayout layout = checkedLayout(ALL_GATHER, null, tensors);
        checkBytes(ALL_GATHER, tensor.length() * worldSize(), layout.type(0));
        return blocking(ALL_GATHER, deadline, () -> {
            INDArray[] result = new INDArray[1];
            engine.run(request.gather(ALL_GATHER, layout, tensors, result, deadline));
            return result[0];
        });
    }

    /**
     * This rank's part of the reduction of {@code input} over all ranks: a new 1-D array of
     * {@code input.length() / worldSize} elements of the input's type, holding elements
     * {@code [rank·m, (rank+1)·m)} of the reduction in 'c' order; {@code input} is only read.
     *
     * @throws IllegalArgumentException as {@link #allReduce}, or if the input's length is not a
     *     multiple of the world size (the message names both)
     */
    public INDArray reduceScatter(ReduceOp op, INDArray input) {
        Deadline deadline = deadlineFromNow();
        INDArray[] tensors = {input};
        TensorLayout layout = checkedLayout(REDUCE_SCATTER, op, tensors);
        if (input.length() % worldSize() != 0) {
            throw new IllegalArgumentException(REDUCE_SCATTER + " on rank " + rank() + ": the input's length "
                    + input.length() + " is not a multiple of the world size " + worldSize());
        }
        checkBytes(REDUCE_SCATTER, input.length(), layout.type(0));
        return blocking(REDUCE_SCATTER, deadline, () -> {
            INDArray[] result = new INDArray[1];
            engine.run(request.scatter(REDUCE_SCATTER, layout, tensors, result, deadline).op(op));
            return result[0];
        });
    }

    /** Returns once every rank has called it, in its place among the collectives. */
    public void barrier() {
        Deadline deadline = deadlineFromNow();
        blocking(BARRIER, deadline, () -> {
            engine.run(request.barrier(BARRIER, deadline));
            return null;
        });
    }

    /**
     * A barrier that, when {@code timeout} passes before every rank arrived, throws on every rank
     * that did arrive a {@link CollectiveTimeoutException} listing every rank that did not (as
     * PyTorch's {@code monitored_barrier(wait_all_ranks=True)}), not only the first one waited
     * for; then, as after any failed collective, the group is failed. In its place among the
     * collectives, like {@link #barrier()}. Blocks at most {@code timeout}. (Over a transport not
     * built on {@link io.ringstar.spi.PeerTransport}, which lacks the hooks it needs, it is the
     * transport's plain barrier, bounded by the transport's timeout.)
     *
     * @param timeout how long to wait for every rank; positive
     * @throws CollectiveTimeoutException naming the ranks that did not arrive
     */
    public void monitoredBarrier(Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException(MONITORED_BARRIER + " on rank " + rank() + ": the timeout must be "
                    + "positive, was " + timeout);
        }
        Deadline deadline = Deadline.after(timeout);
        blocking(MONITORED_BARRIER, deadline, () -> {
            engine.run(request.monitoredBarrier(MONITORED_BARRIER, deadline));
            return null;
        });
    }

    /**
     * Writes this rank's flight recorder (its last {@code traceEntries} collectives, see the
     * README's "When a job stalls") into {@code dir}, made if missing, as one JSON file that
     * {@code ringstar report hang} and {@code report timeline} read, and returns its path. Any
     * thread, any time, also while a collective waits; does not block on the collectives.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public Path dumpTrace(Path dir) {
        return engine.observer().dumpTrace(dir, "request");
    }

    /**
     * Per operation, this rank's completed collectives so far: calls, bytes, median and 99th
     * percentile time, time waiting for peers. A snapshot; any thread.
     */
    public CollectiveStatistics collectiveStatistics() {
        return engine.observer().statistics();
    }

    /**
     * Adds a listener that hears every collective of this communicator issued, started, completed
     * or failed, on the thread that issues or runs it (see {@link CollectiveListener}).
     */
    public void addListener(CollectiveListener listener) {
        engine.observer().addListener(listener);
    }

    /**
     * Stops the communicator: closes the transport (collectives in flight fail fast with
     * {@link IllegalStateException}; peers see this rank gone), waits for the background thread
     * at most the configured timeout, and frees the buffers. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // The queue first, so that a collective the closed transport cuts short reports the close.
        queue.markClosed();
        transport.close();
        if (queue.close(deadlineFromNow())) {
            engine.close();
        }
        // Otherwise the background thread still runs in the buffers: leave them to the collector.
    }

    // ---- running ----

    private Object runAllReduce(ReduceOp op, TensorLayout layout, INDArray[] tensors, Deadline deadline,
            long issued) {
        String name = allReduceAlgorithm(layout);
        CollectiveEngine.Algorithm chosen = name.equals(ALGORITHM_DOUBLING) ? RecursiveDoubling::run
                : name.equals(ALGORITHM_STAR) ? StarReduce::run : RingAllReduce::run;
        engine.run(request.inPlace(ALL_REDUCE, chosen, layout, tensors, deadline).op(op)
                .compressible(CollectiveRequest.Compressible.RING).algorithmName(name).issued(issued));
        return null;
    }

    private Object runBroadcast(int root, TensorLayout layout, INDArray[] tensors, Deadline deadline, long issued) {
        engine.run(request.inPlace(BROADCAST, RingBroadcast::run, layout, tensors, deadline).root(root)
                .algorithmName(RING).issued(issued));
        return null;
    }

    /**
     * The name of the algorithm for an all-reduce of {@code layout}: the option's, or by the largest
     * type group's size.
     */
    private String allReduceAlgorithm(TensorLayout layout) {
        switch (algorithm) {
            case ALGORITHM_RING:
            case ALGORITHM_DOUBLING:
            case ALGORITHM_STAR:
                return algorithm;
            default:
                long largest = 0;
                for (TensorLayout.Group group : layout.groups()) {
                    largest = Math.max(largest, group.elementCount() * group.type().bytes());
                }
                // Two ranks: the ring is one exchange already, with no fold.
                return worldSize() > 2 && largest <= SMALL_MESSAGE_BYTES ? ALGORITHM_DOUBLING : ALGORITHM_RING;
        }
    }

    /** Queues a non-blocking call numbered {@code issued}; if the queue refuses it, the call is recorded as failed. */
    private CollectiveHandle submit(String operation, long issued, Deadline deadline, Supplier<Object> body) {
        try {
            return queue.submit(operation, deadline, body);
        } catch (RuntimeException e) {
            engine.observer().abandon(issued, e);
            throw e;
        }
    }

    /**
     * Runs {@code body} on this thread if no non-blocking collective is in flight, else behind them
     * on the background thread, waiting for it; either way within {@code deadline}.
     */
    private <T> T blocking(String operation, Deadline deadline, Supplier<T> body) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank() + ": the communicator is closed");
        }
        if (queue.idle()) {
            return body.get();
        }
        return queue.submit(operation, deadline, body).result();
    }

    // ---- checks, before anything is sent ----

    private TensorLayout checkedLayout(String operation, ReduceOp op, INDArray[] tensors) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank() + ": the communicator is closed");
        }
        TensorLayout layout = engine.layout(operation, tensors, TensorLayout.ALL_TYPES);
        if (op == null && !operation.equals(BROADCAST) && !operation.equals(ALL_GATHER)) {
            throw new IllegalArgumentException(operation + " on rank " + rank() + ": the reduce op is null");
        }
        if (op == ReduceOp.AVG) {
            for (TensorLayout.Group group : layout.groups()) {
                if (!group.type().isFloatingPoint()) {
                    throw new IllegalArgumentException(operation + " on rank " + rank() + ": AVG of " + group.type()
                            + " tensors is not defined (an integer mean would round); use SUM and divide, or a "
                            + "floating-point type");
                }
            }
        }
        return layout;
    }

    private void checkRoot(String operation, int root) {
        if (root < 0 || root >= worldSize()) {
            throw new IllegalArgumentException(operation + " on rank " + rank() + ": root " + root
                    + " is not a rank of this group of " + worldSize());
        }
    }

    private void checkBytes(String operation, long elements, ElementType type) {
        if (elements * type.bytes() > TensorLayout.MAX_GROUP_BYTES) {
            throw new IllegalArgumentException(operation + " on rank " + rank() + ": " + elements + " " + type
                    + " elements (" + elements * type.bytes() + " bytes) are more than one call moves ("
                    + TensorLayout.MAX_GROUP_BYTES + " bytes); split the tensor");
        }
    }

    private Deadline deadlineFromNow() {
        return Deadline.after(engine.timeout());
    }

    @Override
    public String toString() {
        return "Communicator{rank " + rank() + " of " + worldSize() + ", allReduce " + algorithm + "}";
    }
}
