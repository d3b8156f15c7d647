package io.ringstar;

import io.ringstar.config.AggregatorOptions;
import io.ringstar.internal.algorithm.StarBroadcast;
import io.ringstar.internal.algorithm.StarReduce;
import io.ringstar.internal.engine.CollectiveRequest;
import io.ringstar.internal.engine.OutOfPlaceCollectives;
import io.ringstar.observe.CollectiveListener;
import io.ringstar.observe.CollectiveStatistics;
import java.nio.file.Path;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The star: {@link #reduceGradients} sends every worker's gradients to the servers, which average
 * them part by part as they arrive and send the average back; {@link #broadcastParams} sends rank
 * 0's parameters to every worker. Every rank is a worker.
 *
 * <p><b>Servers.</b> Option {@value #SERVERS_OPTION} (default 1) makes ranks {@code 0 … servers-1}
 * servers: every call's data is cut into bounded partitions, at most a chunk each, dealt out to
 * the servers in turn ({@link io.ringstar.internal.algorithm.StarPartitions}), so each server holds and
 * sends about {@code 1/servers} of it. With one server, rank 0's link carries {@code n-1} times the
 * data each way, which is what the ring avoids; with {@code n} servers every link carries what a
 * ring's does. Each element is still averaged in rank order, so the results have the same bits
 * whatever the number of servers, on every rank. A server's memory grows with its part, not with
 * the world size. A server that fails fails every rank with an exception naming it. See
 * {@link StarReduce} and {@link StarBroadcast}.
 *
 * <p><b>Compression.</b> Option {@value AggregatorOptions#COMPRESSION_OPTION}: {@code fp16} and
 * {@code bf16} as for the ring; {@code topk:F} sends each worker's top fraction F of every chunk as
 * index and value pairs to that chunk's server, which sums them in rank order and sends the dense
 * partition back ({@link io.ringstar.internal.algorithm.TopKStarReduce}); what was not sent is kept per
 * tensor layout and added to the next call. {@link #broadcastParams} is never compressed.
 *
 * <p>Owns the transport it is given and closes it in {@link #close()}. Each call waits at most the
 * configuration's timeout. Chunk size: option {@value AggregatorOptions#CHUNK_BYTES_OPTION}
 * (bytes, default 1 MiB). A CRC32C per message: option
 * {@value DistributedConfig#CHECKSUM_OPTION} (off by default; a mismatch throws
 * {@link PayloadCorruptionException}). Every rank must give the same {@value #SERVERS_OPTION} and
 * checksum option; a rank that does not fails the call, on every rank, with a
 * {@link CollectiveMismatchException}. Contracts as in {@link GradientAggregator}.
 */
public final class ParameterServer implements GradientAggregator {
    /**
     * Option naming how many ranks serve: ranks {@code 0 … servers-1} each serve a part of every
     * call's data (default 1, rank 0 alone); every rank is still a worker. At most the world size.
     */
    public static final String SERVERS_OPTION = "servers";

    private final int servers;
    private final OutOfPlaceCollectives collectives;

    /**
     * @param config this rank's configuration; its rank and world size must match the transport's
     * @param transport an open transport for the group; the aggregator owns it from now on
     * @throws InvalidConfigException if the transport belongs to another rank or world size
     */
    public ParameterServer(DistributedConfig config, Transport transport) {
        this.collectives = new OutOfPlaceCollectives(config, transport, StarReduce::run, StarBroadcast::run,
                CollectiveRequest.Compressible.STAR);
        this.servers = AggregatorOptions.SERVERS.value(config);
    }

    /** Whether this rank is one of the servers, ranks {@code 0 … servers-1}. */
    public boolean isServer() {
        return rank() < servers;
    }

    /** How many ranks serve: option {@value #SERVERS_OPTION}. */
    public int servers() {
        return servers;
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
