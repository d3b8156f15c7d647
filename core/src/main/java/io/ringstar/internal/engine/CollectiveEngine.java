package io.ringstar.internal.engine;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.ParameterServer;
import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.Compression;
import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.algorithm.Failures;
import io.ringstar.internal.algorithm.RecursiveDoubling;
import io.ringstar.internal.observe.CallObserver;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorBucket;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.spi.TransportProbe;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Runs collectives over one group's transport, one at a time, on the calling thread: what the
 * aggregators and the {@link Communicator} share. Every collective, whatever its kind, comes in as
 * a {@link CollectiveRequest} to {@link #run}, the one path: it packs the tensors of one element
 * type into one bucket unless they are one 'c'-order array (then the algorithm works in the
 * array's own memory), numbers the collectives, bounds each by its deadline, tells the peers of a
 * failure and refuses every call after one, and carries the optional checksum
 * ({@link DistributedConfig#CHECKSUM_OPTION}). The algorithms themselves come with the request.
 * Being the one path, it is also where each call is observed: its {@link CallObserver} hears
 * every call's start and end (the flight recorder, statistics, JFR, stall warning, listeners).
 *
 * <p>Owns the transport and the buckets, and closes them in {@link #close()}. Not thread-safe.
 */
public final class CollectiveEngine implements AutoCloseable {
    /** One algorithm over one window: from {@code source} into {@code result} (possibly one buffer). */
    @FunctionalInterface
    public interface Algorithm {
        void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements);
    }

    /** The one group a call of no tensors (a barrier, an empty call) still runs as, so the ranks meet. */
    private static final List<TensorLayout.Group> NO_GROUPS = List.of(TensorLayout.Group.empty(ElementType.FLOAT));

    private final Transport transport;
    /** What the user holds, for error messages: "aggregator" or "communicator". */
    private final String owner;
    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final int chunkBytes;
    private final int bucketBytes;
    private final Map<ElementType, TensorBucket> buckets = new EnumMap<>(ElementType.class);
    private final CollectiveCall call;
    /** What the collectives send through, counted ({@link #bytesSent()}). */
    private final SentBytes sent;
    private final WindowCompression compression;
    /** The transport's hooks, or null for a transport without them. */
    private final TransportProbe probe;
    private final CallObserver observer;
    /** The last call's layout, kept while calls pass the same shapes (see {@link TensorLayout#matches}). */
    private TensorLayout lastLayout;
    /** The last source worked on where it lies, and the view of its bytes, kept while the same array comes back. */
    private final KeptView sourceView = new KeptView();
    /** The same for the last result the caller passed ({@link CollectiveRequest#into}). */
    private final KeptView resultView = new KeptView();
    private long sequence;
    private CollectiveException failure;
    private boolean closed;

    /** @param owner what the user holds, named in error messages ("the aggregator is closed") */
    public CollectiveEngine(DistributedConfig config, Transport transport, String owner) {
        if (transport.rank() != config.rank() || transport.worldSize() != config.worldSize()) {
            throw new InvalidConfigException("transport", "rank " + transport.rank() + " of " + transport.worldSize(),
                    "does not match the configuration's rank " + config.rank() + " of " + config.worldSize());
        }
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("ringstar's wire format is the little-endian memory of ND4J "
                    + "buffers; this platform is " + ByteOrder.nativeOrder());
        }
        this.transport = transport;
        this.owner = owner;
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.timeout = config.timeout();
        this.chunkBytes = AggregatorOptions.CHUNK_BYTES.value(config);
        this.bucketBytes = AggregatorOptions.BUCKET_BYTES.value(config);
        int servers = AggregatorOptions.SERVERS.value(config);
        if (servers > worldSize) {
            throw new InvalidConfigException(ParameterServer.SERVERS_OPTION, Integer.toString(servers),
                    "is more than the world size " + worldSize);
        }
        this.sent = new SentBytes(transport);
        Compression setting = AggregatorOptions.COMPRESSION.value(config);
        this.call = new CollectiveCall(sent, AggregatorOptions.CHECKSUM.value(config),
                Math.max(chunkBytes, Double.BYTES), servers, setting);
        this.compression = new WindowCompression(setting, worldSize, chunkBytes);
        for (ElementType type : ElementType.values()) {
            buckets.put(type, new TensorBucket(type));
        }
        this.probe = BorrowedTransport.probeOf(transport);
        this.observer = new CallObserver(config, owner, probe);
    }

    /** What watches this engine's calls: the flight recorder, statistics, listeners and dumps. */
    public CallObserver observer() {
        return observer;
    }

    /**
     * Numbers a non-blocking call as it is issued, before it is queued, and records it; the request
     * that runs it later carries the number ({@link CollectiveRequest#issued}).
     */
    public long issue(String operation, String algorithmName, int root, TensorLayout layout) {
        return observer.issue(operation, algorithmName, root, layout);
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return worldSize;
    }

    public Duration timeout() {
        return timeout;
    }

    /** The largest payload of one message, in elements of {@code type}. */
    int maxChunkElements(ElementType type) {
        return Math.max(1, chunkBytes / type.bytes());
    }

    /**
     * Bytes held off-heap between calls: the buckets (a call with one array per type needs none),
     * and with compression its scratch buffer and top-k residuals.
     */
    long bufferBytes() {
        long total = compression.bufferBytes();
        for (TensorBucket bucket : buckets.values()) {
            total += bucket.capacityBytes();
        }
        return total;
    }

    /**
     * Bytes of every message the collectives sent so far (64-byte headers and payloads, abort notices
     * too; not the transport's own framing): the difference across a call is what it put on the wire.
     */
    public long bytesSent() {
        return sent.bytes();
    }

    /**
     * Throws if no call may start now: the engine is closed, or the group failed (then an
     * exception of the first failure's type, with it as the cause).
     */
    void checkUsable(String operation) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank + ": the " + owner + " is closed");
        }
        if (failure != null) {
            throw Failures.again(failure, operation, rank);
        }
    }

    /**
     * The layout of {@code tensors}, the last call's if they have the same shapes and types: the one
     * cache of layouts of the engine's owner. Called by the thread that issues the calls, before it
     * hands them on; the collectives themselves read the layout from their request.
     */
    public TensorLayout layout(String operation, INDArray[] tensors, Set<ElementType> allowed) {
        TensorLayout layout = lastLayout != null && lastLayout.matches(tensors) ? lastLayout
                : TensorLayout.of(operation, rank, tensors, allowed);
        lastLayout = layout;
        return layout;
    }

    /**
     * Runs one collective as {@code request} describes it; every collective passes here, and only
     * here. The call is cut into windows (an {@link CollectiveRequest.Kind#IN_LAYOUT} call: one
     * group per element type, each in windows of at most a bucket; the other kinds: one window),
     * and each window is a collective of its own ({@link #window}): the next sequence number, its
     * algorithm, and on any failure the group failed and the peers told. New results the request
     * asked for are made inside that handling and freed if the call fails, so the caller never
     * sees half a result. Blocks until done, at most the request's deadline.
     *
     * @throws IllegalStateException if the engine is closed
     * @throws CollectiveException if the call or an earlier one failed (then the group is failed)
     */
    public void run(CollectiveRequest request) {
        TensorLayout layout = request.layout();
        // Nothing to move (a barrier, no tensors), but the ranks still meet, so a rank that passed tensors is caught.
        List<TensorLayout.Group> groups = layout == null || layout.groups().isEmpty() ? NO_GROUPS : layout.groups();
        boolean windowed = request.kind() == CollectiveRequest.Kind.IN_LAYOUT;
        long callSequence = observer.start(request.issuedSequence(), request.operation(), request.algorithmName(),
                request.root(), layout);
        try {
            // Indexed, not for-each: an iterator per call is an allocation the steady state avoids.
            for (int g = 0; g < groups.size(); g++) {
                TensorLayout.Group group = groups.get(g);
                boolean compressed = windowed && compression.applies(request.compressible(), request.op(),
                        group.type());
                long total = group.elementCount();
                long windowElements = windowed ? bucketBytes / group.type().bytes() : Math.max(1, total);
                if (compressed) {
                    windowElements = compression.windowElements(group.type(), windowElements);
                }
                TensorBucket bucket = windowed && !inOwnMemory(request, group) ? buckets.get(group.type()) : null;
                long from = 0;
                try {
                    do {
                        long to = Math.min(total, from + windowElements);
                        window(request, group, bucket, from, to, compressed);
                        from = to;
                    } while (from < total);
                } finally {
                    if (bucket != null) {
                        bucket.forgetFlattened();
                    }
                }
            }
            observer.complete(callSequence);
        } catch (RuntimeException | Error e) {
            try {
                observer.fail(callSequence, e);
            } catch (RuntimeException | Error observing) {
                // Recording the failure (its dump, say) must not hide it, nor keep the results below alive.
                e.addSuppressed(observing);
            }
            if (request.newResults()) {
                // The caller never sees these arrays; free them now rather than leave them to a collector.
                for (INDArray result : request.results()) {
                    TensorMemory.close(result);
                }
            }
            throw e;
        }
    }

    /**
     * Whether the group is one 'c'-order array, worked on where it lies (and its result too, unless
     * new): its one tensor with elements ({@link #soleTensor}) and that tensor's result are laid out
     * in 'c' order.
     */
    private static boolean inOwnMemory(CollectiveRequest request, TensorLayout.Group group) {
        int index = soleTensor(request.sources(), group);
        return index >= 0 && TensorMemory.isLinearInCOrder(request.sources()[index])
                && (request.newResults() || TensorMemory.isLinearInCOrder(request.results()[index]));
    }

    /**
     * The index in the call of the group's one tensor with elements, its others all empty, or -1 if
     * it has none or several. Empty tensors hold no bytes but count in the layout (DataParallel's
     * batch marker is one, of shape {@code [batch, 0]}), so they need no bucket.
     */
    private static int soleTensor(INDArray[] tensors, TensorLayout.Group group) {
        int found = -1;
        for (int member = 0; member < group.size(); member++) {
            int index = group.tensorIndex(member);
            if (tensors[index].length() > 0) {
                if (found >= 0) {
                    return -1;
                }
                found = index;
            }
        }
        return found;
    }

    /**
     * One window of a group, elements {@code [from, to)}, as a collective of its own, with its own
     * sequence number, so ranks stay in step window by window. It begins the call (outside the
     * failure handling: a call refused then, the engine closed or failed, has sent nothing) and
     * runs the request's kind of collective; whatever that throws fails the group ({@link #failed}).
     */
    private void window(CollectiveRequest request, TensorLayout.Group group, TensorBucket bucket, long from, long to,
            boolean compressed) {
        ElementType type = group.type();
        CollectiveCall collective = begin(request, compressed ? compression.wireType(type) : type, to - from);
        try {
            switch (request.kind()) {
                case IN_LAYOUT -> inLayout(collective, request, group, bucket, from, compressed);
                case ALL_GATHER -> GatherScatter.allGather(collective, request, maxChunkElements(type));
                case REDUCE_SCATTER -> GatherScatter.reduceScatter(collective, request, buckets.get(type),
                        maxChunkElements(type));
                case BARRIER -> RecursiveDoubling.barrier(collective);
                case MONITORED_BARRIER -> monitoredBarrier(request);
                default -> throw new IllegalStateException("no collective of kind " + request.kind());
            }
        } catch (RuntimeException e) {
            throw failed(request.operation(), e);
        } catch (Error e) {
            throw failed(request.operation(), e);
        }
    }

    /**
     * One window of an {@link CollectiveRequest.Kind#IN_LAYOUT} call, the {@code collective}'s element
     * count from {@code from}. With a {@code bucket}, the window is packed into it, the algorithm
     * runs there, and the bucket is unpacked into the results; without, the group is one 'c'-order
     * array and the algorithm reads the source array and writes the result array themselves (the
     * same array, in place).
     */
    private void inLayout(CollectiveCall collective, CollectiveRequest request, TensorLayout.Group group,
            TensorBucket bucket, long from, boolean compressed) {
        ElementType type = group.type();
        long to = from + collective.elementCount();
        INDArray[] sources = request.sources();
        INDArray[] results = request.results();
        if (request.newResults() && from == 0) {
            for (int member = 0; member < group.size(); member++) {
                int index = group.tensorIndex(member);
                results[index] = TensorBucket.newResult(type, request.layout().shape(index));
            }
        }
        ByteBuffer source;
        ByteBuffer result;
        if (bucket != null) {
            source = bucket.packWindow(sources, group, from, to);
            result = source;
        } else {
            int index = soleTensor(sources, group);
            int length = Math.toIntExact((to - from) * type.bytes());
            source = sourceView.bytes(sources[index], from * type.bytes(), length);
            if (results[index] == sources[index]) {
                result = source;
            } else if (request.newResults()) {
                // A new array every call: nothing to keep, and keeping it would hold the caller's result alive.
                result = TensorMemory.bytes(results[index], from * type.bytes(), length);
            } else {
                result = resultView.bytes(results[index], from * type.bytes(), length);
            }
        }
        if (compressed) {
            compression.run(collective, request, group, source, result, from);
        } else {
            request.algorithm().run(collective, source, result, maxChunkElements(type));
        }
        if (bucket != null) {
            if (request.writeResults()) {
                bucket.unpackWindow(results, group, from, to);
            }
            bucket.forgetFlattenedBefore(sources, group, to);
        }
    }

    /**
     * Starts the next collective: the next sequence number, and the request's op, root and layout,
     * with the window's type and count, which every message carries and every receiver checks.
     * Whatever the collective then throws must go through {@link #failed}, so that it fails the
     * group: the peers are told and later calls refused. Otherwise a rank that failed to allocate
     * would leave its peers waiting for their timeout, and the sequence numbers would drift apart.
     */
    private CollectiveCall begin(CollectiveRequest request, ElementType type, long elementCount) {
        checkUsable(request.operation());
        CollectiveCall started = call.begin(request.operation(), sequence, request.op(), request.root(),
                request.layout(), request.deadline()).sized(type, elementCount);
        // Counted once begun: a call refused by begin (a root out of range) sent nothing.
        sequence++;
        return started;
    }

    /**
     * The transport's barrier, bounded by the request's deadline: its timeout names every rank that
     * did not arrive. A transport without {@link TransportProbe} (one not built on
     * {@link io.ringstar.spi.PeerTransport}) has only its plain barrier, bounded by its own timeout.
     */
    private void monitoredBarrier(CollectiveRequest request) {
        try {
            if (probe != null) {
                probe.barrier(request.deadline());
            } else {
                transport.barrier();
            }
        } catch (CollectiveTimeoutException e) {
            throw new CollectiveTimeoutException(request.operation(), rank, e.peerRank(), e.detail(), e);
        }
    }

    /** The compression of this engine's all-reduces; tests of its residuals reach it from this package. */
    WindowCompression compression() {
        return compression;
    }

    /** Fails the group with {@code e} (see {@link #begin}) and returns what to throw. */
    private CollectiveException failed(String operation, RuntimeException e) {
        if (e instanceof CollectiveException) {
            failure = (CollectiveException) e;
        } else {
            failure = new CollectiveException(operation, rank, CollectiveException.NO_RANK,
                    "unexpected failure: " + e, e);
        }
        tellPeers();
        return failure;
    }

    /**
     * Fails the group with {@code e} (see {@link #begin}), but returns the error itself (say, out
     * of memory) to reach the caller unchanged.
     */
    private Error failed(String operation, Error e) {
        failure = new CollectiveException(operation, rank, CollectiveException.NO_RANK, "unexpected error: " + e, e);
        tellPeers();
        return e;
    }

    /**
     * Tells the peers of {@link #failure}: the abort notice to the calls that wait for this rank,
     * and a failure report beside the messages for a peer in no call, whose reader sees it at once.
     */
    private void tellPeers() {
        call.abortPeers(failure);
        if (probe != null) {
            probe.reportFailure(rank);
        }
    }

    /**
     * The view of one array's bytes that the last call worked on, kept while the same array comes
     * back (the usual training step), since making a view allocates: one for the sources worked on
     * where they lie, one for results the caller passes.
     */
    private static final class KeptView {
        private INDArray array;
        private Object data;
        private long offset;
        private ByteBuffer bytes;

        /** A view of {@code tensor}'s bytes from {@code fromByte}: last time's if the same array came back. */
        ByteBuffer bytes(INDArray tensor, long fromByte, int length) {
            if (fromByte != 0) {
                return TensorMemory.bytes(tensor, fromByte, length);
            }
            Object tensorData = tensor.data();
            if (tensor != array || tensorData != data || tensor.offset() != offset || bytes.capacity() != length) {
                bytes = TensorMemory.bytes(tensor, 0, length);
                array = tensor;
                data = tensorData;
                offset = tensor.offset();
            }
            return bytes;
        }

        void forget() {
            array = null;
            data = null;
            bytes = null;
        }
    }

    /** Closes the transport and frees the buckets. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sourceView.forget();
        resultView.forget();
        try {
            transport.close();
        } finally {
            buckets.values().forEach(TensorBucket::close);
            compression.clear();
        }
    }
}
