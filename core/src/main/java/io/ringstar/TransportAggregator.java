package io.ringstar;

import io.ringstar.algorithm.CollectiveCall;
import io.ringstar.algorithm.Failures;
import io.ringstar.protocol.MessageHeader;
import io.ringstar.spi.Deadline;
import io.ringstar.tensor.ElementType;
import io.ringstar.tensor.TensorBucket;
import io.ringstar.tensor.TensorLayout;
import io.ringstar.tensor.TensorMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * What the star and the ring share: checking the call, packing tensors into one bucket per
 * element type, numbering the collectives, bounding each call by the timeout, telling the peers
 * of a failure and refusing every call after one, and the optional checksum of every message
 * ({@link DistributedConfig#CHECKSUM_OPTION}). Subclasses supply the two algorithms.
 */
abstract class TransportAggregator implements GradientAggregator {
    /** Option naming the largest payload of one message in bytes; default 1 MiB. */
    public static final String CHUNK_BYTES_OPTION = "chunkBytes";
    static final int DEFAULT_CHUNK_BYTES = 1 << 20;
    /**
     * Option naming the largest bucket in bytes; default 1 GiB. The tensors of one data type that
     * hold more (a tensor over 2 GiB, say) go through the algorithm in windows of this size, one
     * after the other, so no offset or length ever overflows an int.
     */
    public static final String BUCKET_BYTES_OPTION = "bucketBytes";
    static final int DEFAULT_BUCKET_BYTES = 1 << 30;

    private static final String BROADCAST = "broadcastParams";
    private static final String REDUCE = "reduceGradients";

    private final Transport transport;
    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final int chunkBytes;
    private final int bucketBytes;
    private final Map<ElementType, TensorBucket> buckets = new EnumMap<>(ElementType.class);
    private final CollectiveCall call;
    /** The last call's layout, kept while calls pass the same shapes (see {@link TensorLayout#matches}). */
    private TensorLayout lastLayout;
    /** The last input worked on in place, and the view of its bytes, kept while the same array comes back. */
    private INDArray lastInput;
    private Object lastInputData;
    private long lastInputOffset;
    private ByteBuffer lastInputBytes;
    private long sequence;
    private CollectiveException failure;
    private boolean closed;

    TransportAggregator(DistributedConfig config, Transport transport) {
        if (transport.rank() != config.rank() || transport.worldSize() != config.worldSize()) {
            throw new InvalidConfigException("transport", "rank " + transport.rank() + " of " + transport.worldSize(),
                    "does not match the configuration's rank " + config.rank() + " of " + config.worldSize());
        }
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("ringstar's wire format is the little-endian memory of ND4J "
                    + "buffers; this platform is " + ByteOrder.nativeOrder());
        }
        this.transport = transport;
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.timeout = config.timeout();
        this.chunkBytes = AggregatorOptions.CHUNK_BYTES.value(config);
        this.bucketBytes = AggregatorOptions.BUCKET_BYTES.value(config);
        this.call = new CollectiveCall(transport, checksummed(config), Math.max(chunkBytes, Double.BYTES));
        for (ElementType type : ElementType.values()) {
            buckets.put(type, new TensorBucket(type));
        }
    }

    /**
     * Whether the configuration turns the checksum on.
     *
     * @throws InvalidConfigException if {@link DistributedConfig#CHECKSUM_OPTION} has an unknown value
     */
    static boolean checksummed(DistributedConfig config) {
        return AggregatorOptions.CHECKSUM.value(config);
    }

    /** Runs the reduce algorithm on one window: from {@code source} into {@code result} (possibly one buffer). */
    abstract void reduce(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements);

    /** Runs the broadcast algorithm on one window: from {@code source} into {@code result} (possibly one buffer). */
    abstract void broadcast(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements);

    @Override
    public INDArray[] broadcastParams(INDArray... params) {
        return collective(BROADCAST, params);
    }

    @Override
    public INDArray[] reduceGradients(INDArray... grads) {
        return collective(REDUCE, grads);
    }

    /** This rank. */
    public int rank() {
        return rank;
    }

    /** Number of ranks in the group. */
    public int worldSize() {
        return worldSize;
    }

    /** Bytes this aggregator holds off-heap between calls: its buckets (a call with one tensor per type needs none). */
    public long bufferBytes() {
        long total = 0;
        for (TensorBucket bucket : buckets.values()) {
            total += bucket.capacityBytes();
        }
        return total;
    }

    private INDArray[] collective(String operation, INDArray[] tensors) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank + ": the aggregator is closed");
        }
        if (failure != null) {
            throw Failures.again(failure, operation, rank);
        }
        TensorLayout layout = lastLayout != null && lastLayout.matches(tensors) ? lastLayout
                : TensorLayout.of(operation, rank, tensors, TensorLayout.FLOATING_POINT);
        lastLayout = layout;
        Deadline deadline = Deadline.after(timeout);
        List<TensorLayout.Group> groups = layout.groups();
        if (groups.isEmpty()) {
            // Nothing to move, but the ranks still meet, so a rank that passed tensors is caught.
            groups = List.of(TensorLayout.Group.empty(ElementType.FLOAT));
        }
        INDArray[] results = new INDArray[tensors.length];
        try {
            for (int g = 0; g < groups.size(); g++) {
                TensorLayout.Group group = groups.get(g);
                if (group.size() == 1 && TensorMemory.isLinearInCOrder(tensors[group.tensorIndex(0)])) {
                    runInResult(operation, layout, group, tensors, results, deadline);
                    continue;
                }
                TensorBucket bucket = buckets.get(group.type());
                long windowElements = bucketBytes / group.type().bytes();
                long total = group.elementCount();
                long from = 0;
                try {
                    do {
                        long to = Math.min(total, from + windowElements);
                        run(operation, layout, group, bucket, tensors, results, from, to, deadline);
                        from = to;
                    } while (from < total);
                } finally {
                    bucket.forgetFlattened();
                }
            }
        } catch (RuntimeException | Error e) {
            // The caller never sees these arrays; free them now rather than leave them to a collector.
            for (INDArray result : results) {
                if (result != null && result.closeable()) {
                    result.close();
                }
            }
            throw e;
        }
        return results;
    }

    /**
     * A group of one tensor whose elements lie in 'c' order without gaps (a flattened gradient
     * view, the usual case): the algorithm reads the input array and writes the result array
     * themselves. The input is not even copied into the result: what is sent goes straight from the
     * input, and received bytes are added or copied straight into the result.
     */
    private void runInResult(String operation, TensorLayout layout, TensorLayout.Group group, INDArray[] tensors,
            INDArray[] results, Deadline deadline) {
        long windowElements = bucketBytes / group.type().bytes();
        long total = group.elementCount();
        long from = 0;
        do {
            long to = Math.min(total, from + windowElements);
            run(operation, layout, group, null, tensors, results, from, to, deadline);
            from = to;
        } while (from < total);
    }

    /**
     * One window of a group, elements {@code [from, to)}, as a collective of its own, with its own
     * sequence number, so ranks stay in step window by window. With a {@code bucket}, the window is
     * packed into it, reduced or broadcast there, and unpacked into the results; without, the
     * group is one tensor and the algorithm runs in its result (see {@link #runInResult}). The
     * results are made in the first window. Everything it does fails the group the same way: the
     * peers are told and later calls refused. Otherwise a rank that failed to allocate would leave
     * its peers waiting for their timeout, and the sequence numbers would drift apart.
     */
    private void run(String operation, TensorLayout layout, TensorLayout.Group group, TensorBucket bucket,
            INDArray[] tensors, INDArray[] results, long from, long to, Deadline deadline) {
        ElementType type = group.type();
        boolean reducing = operation.equals(REDUCE);
        call.begin(operation, sequence++, reducing ? ReduceOp.AVG : null, reducing ? MessageHeader.NO_ROOT : 0, type,
                to - from, layout.fingerprint(), layout.tensorCount(), layout, deadline);
        int maxChunkElements = Math.max(1, chunkBytes / type.bytes());
        try {
            if (from == 0) {
                for (int member = 0; member < group.size(); member++) {
                    int index = group.tensorIndex(member);
                    results[index] = TensorBucket.newResult(type, layout.shape(index));
                }
            }
            ByteBuffer source;
            ByteBuffer result;
            if (bucket != null) {
                source = bucket.packWindow(tensors, group, from, to);
                result = source;
            } else {
                int index = group.tensorIndex(0);
                int length = Math.toIntExact((to - from) * type.bytes());
                result = TensorMemory.bytes(results[index], from * type.bytes(), length);
                source = inputBytes(tensors[index], from * type.bytes(), length);
            }
            if (reducing) {
                reduce(call, source, result, maxChunkElements);
            } else {
                broadcast(call, source, result, maxChunkElements);
            }
            if (bucket != null) {
                bucket.unpackWindow(results, group, from, to);
            }
        } catch (CollectiveException e) {
            failure = e;
            call.abortPeers(e);
            throw e;
        } catch (RuntimeException e) {
            failure = new CollectiveException(operation, rank, CollectiveException.NO_RANK,
                    "unexpected failure: " + e, e);
            call.abortPeers(failure);
            throw failure;
        } catch (Error e) {
            // Poison the group and tell the peers, but let the error itself (say, out of
            // memory) reach the caller unchanged.
            failure = new CollectiveException(operation, rank, CollectiveException.NO_RANK,
                    "unexpected error: " + e, e);
            call.abortPeers(failure);
            throw e;
        }
    }

    /**
     * A view of {@code input}'s bytes from {@code fromByte}, the same view as last time if the same array came
     * back.
     */
    private ByteBuffer inputBytes(INDArray input, long fromByte, int length) {
        if (fromByte != 0) {
            return TensorMemory.bytes(input, fromByte, length);
        }
        Object data = input.data();
        if (input != lastInput || data != lastInputData || input.offset() != lastInputOffset
                || lastInputBytes.capacity() != length) {
            lastInputBytes = TensorMemory.bytes(input, 0, length);
            lastInput = input;
            lastInputData = data;
            lastInputOffset = input.offset();
        }
        return lastInputBytes;
    }

    /** Closes the transport and frees the buckets. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            transport.close();
        } finally {
            buckets.values().forEach(TensorBucket::close);
        }
    }
}
