package io.ringstar;

import io.ringstar.algorithm.CollectiveCall;
import io.ringstar.algorithm.RingAllReduce;
import io.ringstar.algorithm.RingBroadcast;
import java.nio.ByteBuffer;

/**
 * The ring: {@link #reduceGradients} is a chunked, pipelined ring all-reduce (reduce-scatter then
 * all-gather) in which every rank sends and receives {@code 2(n-1)/n} of the data, whatever the
 * world size; {@link #broadcastParams} is a pipelined chain from rank 0 along the ring. See
 * {@link RingAllReduce} and {@link RingBroadcast}.
 *
 * <p>Owns the transport it is given and closes it in {@link #close()}. Each call waits at most the
 * configuration's timeout. Chunk size: option {@value TransportAggregator#CHUNK_BYTES_OPTION}
 * (bytes, default 1 MiB). A CRC32C per message: option
 * {@value DistributedConfig#CHECKSUM_OPTION} (off by default; a mismatch throws
 * {@link PayloadCorruptionException}). Contracts as in {@link GradientAggregator}.
 */
public final class AllReduceAggregator extends TransportAggregator {

    /**
     * @param config this rank's configuration; its rank and world size must match the transport's
     * @param transport an open transport for the group; the aggregator owns it from now on
     * @throws InvalidConfigException if the transport belongs to another rank or world size
     */
    public AllReduceAggregator(DistributedConfig config, Transport transport) {
        super(config, transport);
    }

    @Override
    void reduce(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        RingAllReduce.run(call, source, result, maxChunkElements);
    }

    @Override
    void broadcast(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        RingBroadcast.run(call, source, result, maxChunkElements);
    }
}
