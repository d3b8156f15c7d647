package io.ringstar;

import io.ringstar.algorithm.CollectiveCall;
import io.ringstar.algorithm.Failures;
import io.ringstar.protocol.MessageHeader;
import io.ringstar.tensor.ElementType;
import io.ringstar.tensor.TensorBucket;
import io.ringstar.tensor.TensorLayout;
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
 * of a failure and refusing every call after one. Subclasses supply the two algorithms.
 */
abstract class TransportAggregator implements GradientAggregator {
    /** Option naming the largest payload of one message in bytes; default 1 MiB. */
    public static final String CHUNK_BYTES_OPTION = "chunkBytes";
    static final int DEFAULT_CHUNK_BYTES = 1 << 20;

    private static final String BROADCAST = "broadcastParams";
    private static final String REDUCE = "reduceGradients";

    private final Transport transport;
    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final int chunkBytes;
    private final Map<ElementType, TensorBucket> buckets = new EnumMap<>(ElementType.class);
    private final ByteBuffer headerBuffer;
    private final ByteBuffer receiveBuffer;
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
        this.chunkBytes = config.positiveIntOption(CHUNK_BYTES_OPTION, DEFAULT_CHUNK_BYTES);
        this.headerBuffer = ByteBuffer.allocateDirect(MessageHeader.LENGTH);
        this.receiveBuffer = ByteBuffer.allocateDirect(
                CollectiveCall.minimumReceiveBytes(Math.max(chunkBytes, Double.BYTES)));
        for (ElementType type : ElementType.values()) {
            buckets.put(type, new TensorBucket(type));
        }
    }

    /** Runs the reduce algorithm on one bucket, in place. */
    abstract void reduce(CollectiveCall call, ByteBuffer bucket, int maxChunkElements);

    /** Runs the broadcast algorithm on one bucket, in place. */
    abstract void broadcast(CollectiveCall call, ByteBuffer bucket, int maxChunkElements);

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

    /** Bytes this aggregator holds off-heap between calls: its buckets and its receive buffer. */
    public long bufferBytes() {
        long total = receiveBuffer.capacity() + headerBuffer.capacity();
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
        TensorLayout layout = TensorLayout.of(operation, rank, tensors);
        long deadline = System.nanoTime() + timeout.toNanos();
        List<TensorLayout.Group> groups = layout.groups();
        if (groups.isEmpty()) {
            // Nothing to move, but the ranks still meet, so a rank that passed tensors is caught.
            groups = List.of(TensorLayout.Group.empty(ElementType.FLOAT));
        }
        INDArray[] results = new INDArray[tensors.length];
        for (TensorLayout.Group group : groups) {
            TensorBucket bucket = buckets.get(group.type());
            ByteBuffer bytes = bucket.pack(tensors, group);
            CollectiveCall call = new CollectiveCall(transport, operation, sequence++, group.type(),
                    group.elementCount(), layout.fingerprint(), layout.tensorCount(), layout.describe(), deadline,
                    timeout, headerBuffer, receiveBuffer);
            int maxChunkElements = Math.max(1, chunkBytes / group.type().bytes());
            try {
                if (operation.equals(REDUCE)) {
                    reduce(call, bytes, maxChunkElements);
                } else {
                    broadcast(call, bytes, maxChunkElements);
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
            for (int member = 0; member < group.size(); member++) {
                int index = group.tensorIndex(member);
                results[index] = bucket.unpack(group.elementOffset(member), layout.shape(index));
            }
        }
        return results;
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
