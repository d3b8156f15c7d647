package io.ringstar.internal.engine;

import io.ringstar.CollectiveException;
import io.ringstar.Communicator;
import io.ringstar.Deadline;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.ParameterServer;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.algorithm.Failures;
import io.ringstar.internal.compression.Compression;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorBucket;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.internal.tensor.TensorMemory;
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
 * aggregators and the {@link Communicator} share. It checks the call's tensors, packs those of one
 * element type into one bucket unless they are one 'c'-order array (then the algorithm works in
 * the array's own memory), numbers the collectives, bounds each by its deadline, tells the peers
 * of a failure and refuses every call after one, and carries the optional checksum
 * ({@link DistributedConfig#CHECKSUM_OPTION}). The algorithms themselves are passed in.
 *
 * <p>Owns the transport and the buckets, and closes them in {@link #close()}. Not thread-safe.
 */
public final class CollectiveEngine implements AutoCloseable {
    /** One algorithm over one window: from {@code source} into {@code result} (possibly one buffer). */
    @FunctionalInterface
    public interface Algorithm {
        void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements);
    }

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
    /** The last call's layout, kept while calls pass the same shapes (see {@link TensorLayout#matches}). */
    private TensorLayout lastLayout;
    /** The last source worked on in place, and the view of its bytes, kept while the same array comes back. */
    private INDArray lastSource;
    private Object lastSourceData;
    private long lastSourceOffset;
    private ByteBuffer lastSourceBytes;
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
        this.compression = new WindowCompression(setting, worldSize);
        for (ElementType type : ElementType.values()) {
            buckets.put(type, new TensorBucket(type));
        }
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
    public int maxChunkElements(ElementType type) {
        return Math.max(1, chunkBytes / type.bytes());
    }

    /**
     * Bytes held off-heap between calls: the buckets (a call with one array per type needs none),
     * and with compression its scratch buffer and top-k residuals.
     */
    public long bufferBytes() {
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

    /** The bucket of {@code type}, for collectives that need a buffer of their own. */
    public TensorBucket bucket(ElementType type) {
        return buckets.get(type);
    }

    /**
     * Throws if no call may start now: the engine is closed, or the group failed (then an
     * exception of the first failure's type, with it as the cause).
     */
    public void checkUsable(String operation) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank + ": the " + owner + " is closed");
        }
        if (failure != null) {
            throw Failures.again(failure, operation, rank);
        }
    }

    /** The first failure of the group, or null. */
    public CollectiveException failure() {
        return failure;
    }

    /** The layout of {@code tensors}, the last one's if they have the same shapes and types. */
    public TensorLayout layout(String operation, INDArray[] tensors, Set<ElementType> allowed) {
        TensorLayout layout = lastLayout != null && lastLayout.matches(tensors) ? lastLayout
                : TensorLayout.of(operation, rank, tensors, allowed);
        lastLayout = layout;
        return layout;
    }

    /**
     * Runs one collective over {@code sources}, tensor group by group (one per element type), and
     * writes what the algorithm leaves in its result into {@code results}. {@code results} may be
     * {@code sources} itself (in place); with {@code newResults} the engine makes each result, a
     * new 'c'-order array of its source's shape and type, inside the failure handling (a rank
     * that cannot allocate still tells its peers). With {@code writeResults} false the results
     * are left as they are (the ranks of a reduce that are not its root).
     */
    public void run(String operation, Algorithm algorithm, ReduceOp op, int root, TensorLayout layout,
            INDArray[] sources, INDArray[] results, boolean newResults, boolean writeResults, Deadline deadline) {
        run(operation, algorithm, WindowCompression.Compressible.NO, op, root, layout, sources, results, newResults,
                writeResults, deadline);
    }

    /**
     * {@link #run(String, Algorithm, ReduceOp, int, TensorLayout, INDArray[], INDArray[], boolean, boolean,
     * Deadline)} of an all-reduce that option compression applies to as {@code compressible} says
     * (see {@link WindowCompression}): its SUM or AVG windows of FLOAT and DOUBLE are compressed.
     */
    public void run(String operation, Algorithm algorithm, WindowCompression.Compressible compressible, ReduceOp op,
            int root, TensorLayout layout, INDArray[] sources, INDArray[] results, boolean newResults,
            boolean writeResults, Deadline deadline) {
        List<TensorLayout.Group> groups = layout.groups();
        if (groups.isEmpty()) {
            // Nothing to move, but the ranks still meet, so a rank that passed tensors is caught.
            groups = List.of(TensorLayout.Group.empty(ElementType.FLOAT));
        }
        try {
            // Indexed, not for-each: an iterator per call is an allocation the steady state avoids.
            for (int g = 0; g < groups.size(); g++) {
                TensorLayout.Group group = groups.get(g);
                boolean compressed = compression.applies(compressible, op, group.type());
                long windowElements = bucketBytes / group.type().bytes();
                if (compressed) {
                    windowElements = compression.windowElements(group.type(), windowElements);
                }
                long total = group.elementCount();
                boolean inOwnMemory = group.size() == 1 && TensorMemory.isLinearInCOrder(sources[group.tensorIndex(0)])
                        && (newResults || TensorMemory.isLinearInCOrder(results[group.tensorIndex(0)]));
                TensorBucket bucket = inOwnMemory ? null : buckets.get(group.type());
                long from = 0;
                try {
                    do {
                        long to = Math.min(total, from + windowElements);
                        window(operation, algorithm, compressed ? compressible : WindowCompression.Compressible.NO,
                                op, root, layout, group, bucket, sources, results, newResults, writeResults, from, to,
                                deadline);
                        from = to;
                    } while (from < total);
                } finally {
                    if (bucket != null) {
                        bucket.forgetFlattened();
                    }
                }
            }
        } catch (RuntimeException | Error e) {
            if (newResults) {
                // The caller never sees these arrays; free them now rather than leave them to a collector.
                for (INDArray result : results) {
                    TensorMemory.close(result);
                }
            }
            throw e;
        }
    }

    /**
     * One window of a group, elements {@code [from, to)}, as a collective of its own, with its own
     * sequence number, so ranks stay in step window by window. With a {@code bucket}, the window is
     * packed into it, the algorithm runs there, and the bucket is unpacked into the results;
     * without, the group is one 'c'-order array and the algorithm reads the source array and
     * writes the result array themselves (the same array, in place).
     */
    private void window(String operation, Algorithm algorithm, WindowCompression.Compressible compressed, ReduceOp op,
            int root, TensorLayout layout, TensorLayout.Group group, TensorBucket bucket, INDArray[] sources,
            INDArray[] results, boolean newResults, boolean writeResults, long from, long to, Deadline deadline) {
        ElementType type = group.type();
        boolean compressing = compressed != WindowCompression.Compressible.NO;
        CollectiveCall collective = begin(operation, op, root, compressing ? compression.wireType(type) : type,
                to - from, layout, deadline);
        try {
            if (newResults && from == 0) {
                for (int member = 0; member < group.size(); member++) {
                    int index = group.tensorIndex(member);
                    results[index] = TensorBucket.newResult(type, layout.shape(index));
                }
            }
            ByteBuffer source;
            ByteBuffer result;
            if (bucket != null) {
                source = bucket.packWindow(sources, group, from, to);
                result = source;
            } else {
                int index = group.tensorIndex(0);
                int length = Math.toIntExact((to - from) * type.bytes());
                source = sourceBytes(sources[index], from * type.bytes(), length);
                result = results[index] == sources[index] ? source
                        : TensorMemory.bytes(results[index], from * type.bytes(), length);
            }
            if (compressing) {
                compression.run(collective, algorithm, compressed, type, source, result, layout.fingerprint(),
                        group.elementCount(), from, Math.toIntExact(to - from), maxChunkElements(type) * type.bytes());
            } else {
                algorithm.run(collective, source, result, maxChunkElements(type));
            }
            if (bucket != null) {
                if (writeResults) {
                    bucket.unpackWindow(results, group, from, to);
                }
                bucket.forgetFlattenedBefore(sources, group, to);
            }
        } catch (RuntimeException e) {
            throw failed(operation, e);
        } catch (Error e) {
            throw failed(operation, e);
        }
    }

    /**
     * Starts the next collective: the next sequence number, and the op, root, type, count and
     * layout that every message carries and every receiver checks. Whatever the collective then
     * throws must go through {@link #failed}, so that it fails the group: the peers are told and
     * later calls refused. Otherwise a rank that failed to allocate would leave its peers waiting
     * for their timeout, and the sequence numbers would drift apart.
     *
     * @param layout the call's tensors, or null for a collective without any (a barrier)
     */
    public CollectiveCall begin(String operation, ReduceOp op, int root, ElementType type, long elementCount,
            TensorLayout layout, Deadline deadline) {
        checkUsable(operation);
        CollectiveCall started = call.begin(operation, sequence, op, root, type, elementCount,
                layout == null ? 0 : layout.fingerprint(), layout == null ? 0 : layout.tensorCount(), layout, deadline);
        // Counted once begun: a call refused by begin (a root out of range) sent nothing.
        sequence++;
        return started;
    }

    /** The compression of this engine's all-reduces, for tests of its residuals. */
    public WindowCompression compression() {
        return compression;
    }

    /** Fails the group with {@code e} (see {@link #begin}) and returns what to throw. */
    public CollectiveException failed(String operation, RuntimeException e) {
        if (e instanceof CollectiveException) {
            failure = (CollectiveException) e;
        } else {
            failure = new CollectiveException(operation, rank, CollectiveException.NO_RANK,
                    "unexpected failure: " + e, e);
        }
        call.abortPeers(failure);
        return failure;
    }

    /**
     * Fails the group with {@code e} (see {@link #begin}), but returns the error itself (say, out
     * of memory) to reach the caller unchanged.
     */
    public Error failed(String operation, Error e) {
        failure = new CollectiveException(operation, rank, CollectiveException.NO_RANK, "unexpected error: " + e, e);
        call.abortPeers(failure);
        return e;
    }

    /**
     * A view of {@code source}'s bytes from {@code fromByte}, the same view as last time if the same array came
     * back.
     */
    public ByteBuffer sourceBytes(INDArray source, long fromByte, int length) {
        if (fromByte != 0) {
            return TensorMemory.bytes(source, fromByte, length);
        }
        Object data = source.data();
        if (source != lastSource || data != lastSourceData || source.offset() != lastSourceOffset
                || lastSourceBytes.capacity() != length) {
            lastSourceBytes = TensorMemory.bytes(source, 0, length);
            lastSource = source;
            lastSourceData = data;
            lastSourceOffset = source.offset();
        }
        return lastSourceBytes;
    }

    /** Closes the transport and frees the buckets. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        lastSource = null;
        lastSourceBytes = null;
        try {
            transport.close();
        } finally {
            buckets.values().forEach(TensorBucket::close);
            compression.clear();
        }
    }
}
