package io.ringstar;

import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.algorithm.RingAllReduce;
import io.ringstar.internal.algorithm.RingBroadcast;
import io.ringstar.internal.engine.CollectiveRequest;
import io.ringstar.internal.engine.OutOfPlaceCollectives;
import io.ringstar.observe.CollectiveListener;
import io.ringstar.observe.CollectiveStatistics;
import java.nio.file.Path;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The ring: {@link #reduceGradients} is a chunked, pipelined ring all-reduce (reduce-scatter then
 * all-gather) in which every rank sends and receives {@code 2(n-1)/n} of the data, whatever the
 * world size; {@link #broadcastParams} is a pipelined chain from rank 0 along the ring. See
 * {@link RingAllReduce} and {@link RingBroadcast}.
 *
 * <p>Owns the transport it is given and closes it in {@link #close()}. Each call waits at most the
 * configuration's timeout. Chunk size: option {@value AggregatorOptions#CHUNK_BYTES_OPTION}
 * (bytes, default 1 MiB). A CRC32C per message: option
 * {@value DistributedConfig#CHECKSUM_OPTION} (off by default; a mismatch throws
 * {@link PayloadCorruptionException}). Contracts as in {@link GradientAggregator}.
 *
 * <p><b>Compression</b> of {@link #reduceGradients}' FLOAT and DOUBLE tensors: option
 * {@value AggregatorOptions#COMPRESSION_OPTION}. {@code fp16} or {@code bf16}: the ring runs on the
 * values rounded to 16 bits and summed in float32, half the bytes, within
 * {@code (n+1) u (|x_1| + ... + |x_n|) / n} of the exact average (u = 2^-11 for fp16, 2^-8 for
 * bf16; for DOUBLE inputs u + 2^-24), plus 2^-25. {@code topk:F}: each rank sends, per chunk of its
 * gradients, the fraction F largest in magnitude as (index, value) pairs, gathered around the ring
 * and summed on every rank in rank order ({@link io.ringstar.internal.algorithm.TopKAllReduce}); what it did
 * not send is kept, one dense copy of the gradients per tensor layout, and added to the next call's.
 * HALF and BFLOAT16 tensors and {@link #broadcastParams} are never compressed. Results stay
 * bit-identical on every rank. {@code ALGORITHMS.md} gives the bytes on the wire of each setting.
 */
public final class AllReduceAggregator implements GradientAggregator {
    private final OutOfPlaceCollectives collectives;

    /**
     * @param config this rank's configuration; its rank and world size must match the transport's
     * @param transport an open transport for the group; the aggregator owns it from now on
     * @throws InvalidConfigException if the transport belongs to another rank or world size
     */
    public AllReduceAggregator(DistributedConfig config, Transport transport) {
        this.collectives = new OutOfPlaceCollectives(config, transport, RingAllReduce::run, RingBroadcast::run,
                CollectiveRequest.Compressible.RING);
    }

    @Override
    public INDArray[] broadcastParams(INDArray... params) {
        return collectives.broadcastParams(params);
    }

    @Override
    public INDArray[] reduceGradients(INDArray... grads) {
        return collectives.reduceGradients(grads);
    }

    @Override
    public void reduceGradientsInto(INDArray[] gradients, INDArray[] results) {
        collectives.reduceGradientsInto(gradients, results);
    }

    @Override
    public int rank() {
        return collectives.rank();
    }

    @Override
    public int worldSize() {
        return collectives.worldSize();
    }

    /** Bytes this aggregator holds off-heap between calls: its buckets (a call with one tensor per type needs none). */
    public long bufferBytes() {
        return collectives.bufferBytes();
    }

    /**
     * Bytes this rank has sent so far in the aggregator's collectives: every message's 64-byte header
     * and payload (not the transport's own framing). Read it before and after a call, on the thread
     * that makes the calls, for the bytes the call put on the wire from this rank (with compression,
     * see {@value AggregatorOptions#COMPRESSION_OPTION}, fewer).
     */
    public long bytesSent() {
        return collectives.bytesSent();
    }

    @Override
    public CollectiveStatistics collectiveStatistics() {
        return collectives.observer().statistics();
    }

    @Override
    public Path dumpTrace(Path dir) {
        return collectives.observer().dumpTrace(dir, "request");
    }

    @Override
    public void addListener(CollectiveListener listener) {
        collectives.observer().addListener(listener);
    }

    /** Closes the transport and frees the buffers. Idempotent. */
    @Override
    public void close() {
        collectives.close();
    }
}
