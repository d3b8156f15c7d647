package io.ringstar.internal.engine;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.Deadline;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.InvalidConfigException;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.tensor.TensorLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * What the star and the ring share: out-of-place calls (new result arrays, inputs untouched) run
 * by a {@link CollectiveEngine}, which checks the call, packs tensors, numbers the collectives,
 * bounds each by the timeout and fails the group on the first failure. Subclasses supply the two
 * algorithms.
 */
public abstract class TransportAggregator implements GradientAggregator {
    /** Option naming the largest payload of one message in bytes; default 1 MiB. */
    public static final String CHUNK_BYTES_OPTION = "chunkBytes";
    public static final int DEFAULT_CHUNK_BYTES = 1 << 20;
    /**
     * Option naming the largest bucket in bytes; default 1 GiB. The tensors of one data type that
     * hold more (a tensor over 2 GiB, say) go through the algorithm in windows of this size, one
     * after the other, so no offset or length ever overflows an int.
     */
    public static final String BUCKET_BYTES_OPTION = "bucketBytes";
    public static final int DEFAULT_BUCKET_BYTES = 1 << 30;
    /**
     * Option naming how gradients are sent: {@code none} (default), {@code fp16}, {@code bf16} or
     * {@code topk:F} (see {@link io.ringstar.internal.compression.Compression}); the same on every rank, or
     * every rank fails with a {@link CollectiveMismatchException}. It applies to SUM and AVG
     * all-reduces of FLOAT and DOUBLE tensors ({@link #reduceGradients}, the communicator's
     * all-reduce); {@link #broadcastParams}, HALF, BFLOAT16 and integer tensors are never compressed.
     * fp16/bf16: values rounded to 16 bits (nearest even) and summed in float32, half the bytes.
     * topk:F: per chunk the fraction F largest in magnitude, as (index, value) pairs; the rest is kept
     * on the rank (one dense copy of the gradients per tensor layout) and added to the next call's.
     */
    public static final String COMPRESSION_OPTION = "compression";

    private static final String BROADCAST = "broadcastParams";
    private static final String REDUCE = "reduceGradients";

    private final CollectiveEngine engine;
    private final Duration timeout;
    /** The subclass's algorithms, as objects made once: a method reference per call would allocate. */
    private final CollectiveEngine.Algorithm reduceAlgorithm = this::reduce;
    private final CollectiveEngine.Algorithm broadcastAlgorithm = this::broadcast;

    /** How top-k pairs of {@link #reduceGradients} travel: to the star's servers, or around the ring. */

    protected TransportAggregator(DistributedConfig config, Transport transport) {
        this.engine = new CollectiveEngine(config, transport, "aggregator");
        this.timeout = config.timeout();
    }

    /** The engine, for tests of the compression's residuals. */
    public CollectiveEngine engine() {
        return engine;
    }

    /**
     * Whether the configuration turns the checksum on.
     *
     * @throws InvalidConfigException if {@link DistributedConfig#CHECKSUM_OPTION} has an unknown value
     */
    public static boolean checksummed(DistributedConfig config) {
        return AggregatorOptions.CHECKSUM.value(config);
    }

    /** Runs the reduce algorithm on one window: from {@code source} into {@code result} (possibly one buffer). */
    protected abstract void reduce(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements);

    /** Runs the broadcast algorithm on one window: from {@code source} into {@code result} (possibly one buffer). */
    protected abstract void broadcast(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements);

    /** Which sparse algorithm {@code topk} compression uses for {@link #reduceGradients}: the topology's. */
    protected abstract WindowCompression.Compressible compressible();

    @Override
    public INDArray[] broadcastParams(INDArray... params) {
        return collective(BROADCAST, params, null, 0, broadcastAlgorithm, WindowCompression.Compressible.NO);
    }

    @Override
    public INDArray[] reduceGradients(INDArray... grads) {
        return collective(REDUCE, grads, ReduceOp.AVG, MessageHeader.NO_ROOT, reduceAlgorithm, compressible());
    }

    @Override
    public int rank() {
        return engine.rank();
    }

    @Override
    public int worldSize() {
        return engine.worldSize();
    }

    /** Bytes this aggregator holds off-heap between calls: its buckets (a call with one tensor per type needs none). */
    public long bufferBytes() {
        return engine.bufferBytes();
    }

    /**
     * Bytes this rank has sent so far in the aggregator's collectives: every message's 64-byte header
     * and payload (not the transport's own framing). Read it before and after a call, on the thread
     * that makes the calls, for the bytes the call put on the wire from this rank (with compression,
     * see {@value #COMPRESSION_OPTION}, fewer).
     */
    public long bytesSent() {
        return engine.bytesSent();
    }

    private INDArray[] collective(String operation, INDArray[] tensors, ReduceOp op, int root,
            CollectiveEngine.Algorithm algorithm, WindowCompression.Compressible compression) {
        engine.checkUsable(operation);
        TensorLayout layout = engine.layout(operation, tensors, TensorLayout.FLOATING_POINT);
        INDArray[] results = new INDArray[tensors.length];
        engine.run(operation, algorithm, compression, op, root, layout, tensors, results, true, true,
                Deadline.after(timeout));
        return results;
    }

    /** Closes the transport and frees the buckets. Idempotent. */
    @Override
    public void close() {
        engine.close();
    }
}
