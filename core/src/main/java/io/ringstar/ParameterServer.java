package io.ringstar;

import io.ringstar.algorithm.CollectiveCall;
import io.ringstar.algorithm.StarBroadcast;
import io.ringstar.algorithm.StarReduce;
import java.nio.ByteBuffer;

/**
 * The star, with rank 0 as the server: {@link #reduceGradients} streams every worker's gradients
 * to rank 0, which averages them chunk by chunk as they arrive and streams the average back;
 * {@link #broadcastParams} sends rank 0's parameters to every worker. Rank 0's link carries
 * {@code n-1} times the data each way, which is what the ring avoids; its memory does not grow
 * with the world size. See {@link StarReduce} and {@link StarBroadcast}.
 *
 * <p>Owns the transport it is given and closes it in {@link #close()}. Each call waits at most the
 * configuration's timeout. Chunk size: option {@value TransportAggregator#CHUNK_BYTES_OPTION}
 * (bytes, default 1 MiB). A CRC32C per message: option
 * {@value DistributedConfig#CHECKSUM_OPTION} (off by default; a mismatch throws
 * {@link PayloadCorruptionException}). Contracts as in {@link GradientAggregator}.
 */
public final class ParameterServer extends TransportAggregator {
    /**
     * Option naming how many ranks serve: ranks {@code 0 … servers-1} each serve a part of every
     * call's data (default 1, rank 0 alone); every rank is still a worker. At most the world size.
     */
    public static final String SERVERS_OPTION = "servers";
    /** The most servers the header's 16-bit field carries. */
    static final int MAX_SERVERS = 65_535;

    /**
     * @param config this rank's configuration; its rank and world size must match the transport's
     * @param transport an open transport for the group; the aggregator owns it from now on
     * @throws InvalidConfigException if the transport belongs to another rank or world size
     */
    public ParameterServer(DistributedConfig config, Transport transport) {
        super(config, transport);
    }

    /** Whether this rank is the server, rank 0. */
    public boolean isServer() {
        return rank() == 0;
    }

    @Override
    void reduce(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        StarReduce.run(call, source, result, maxChunkElements);
    }

    @Override
    void broadcast(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        StarBroadcast.run(call, source, result, maxChunkElements);
    }
}
