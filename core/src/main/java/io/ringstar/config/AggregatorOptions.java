package io.ringstar.config;

import io.ringstar.AllReduceAggregator;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.ParameterServer;
import io.ringstar.Transports;
import io.ringstar.internal.compression.Compression;
import io.ringstar.internal.engine.TransportAggregator;
import io.ringstar.internal.tensor.TensorLayout;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The options that {@link ParameterServer}, {@link AllReduceAggregator} and {@link Communicator}
 * read, whatever the transport: the checksum, the chunk size, the bucket size, the
 * communicator's all-reduce algorithm, the star's number of servers and the compression. Every
 * configuration may carry them; {@link Transports#options(String)} lists them with the transport's own.
 */
public final class AggregatorOptions {
    /** {@value DistributedConfig#CHECKSUM_OPTION}: a CRC32C per message, or none (see {@link DistributedConfig}). */
    public static final ConfigOption<Boolean> CHECKSUM = ConfigOption.builder(DistributedConfig.CHECKSUM_OPTION,
                    OptionParser.choice(checksums()))
            .flag("checksum").environmentVariable("RINGSTAR_CHECKSUM")
            .defaultValue(false).defaultText(DistributedConfig.CHECKSUM_NONE)
            .description("a CRC32C of every message, checked before a byte of it is used; the same on every rank")
            .build();
    /** {@value TransportAggregator#CHUNK_BYTES_OPTION}: the largest payload of one message. */
    public static final ConfigOption<Integer> CHUNK_BYTES = ConfigOption.builder(
                    TransportAggregator.CHUNK_BYTES_OPTION, OptionParser.byteSize(1, Integer.MAX_VALUE))
            .defaultValue(TransportAggregator.DEFAULT_CHUNK_BYTES).defaultText("1M")
            .description("the largest payload of one message of a collective (at least 8 bytes are sent)")
            .build();
    /** {@value TransportAggregator#BUCKET_BYTES_OPTION}: the largest bucket of packed tensors. */
    public static final ConfigOption<Integer> BUCKET_BYTES = ConfigOption.builder(
                    TransportAggregator.BUCKET_BYTES_OPTION,
                    OptionParser.byteSize(Double.BYTES, (int) TensorLayout.MAX_GROUP_BYTES))
            .defaultValue(TransportAggregator.DEFAULT_BUCKET_BYTES).defaultText("1G")
            .description("the largest bucket the tensors of one data type are packed into; more goes in windows")
            .build();
    /** {@value Communicator#ALGORITHM_OPTION}: the communicator's all-reduce algorithm, or auto. */
    public static final ConfigOption<String> ALL_REDUCE_ALGORITHM = ConfigOption.builder(
                    Communicator.ALGORITHM_OPTION, OptionParser.choice(Communicator.ALGORITHM_AUTO,
                    Communicator.ALGORITHM_RING, Communicator.ALGORITHM_DOUBLING, Communicator.ALGORITHM_STAR))
            .defaultValue(Communicator.ALGORITHM_AUTO)
            .description("the communicator's all-reduce: auto (by size), ring, doubling or star; equal on every rank")
            .build();
    /** {@value ParameterServer#SERVERS_OPTION}: how many ranks serve the star (ranks 0 to servers-1). */
    public static final ConfigOption<Integer> SERVERS = ConfigOption.builder(ParameterServer.SERVERS_OPTION,
                    OptionParser.intIn(1, ParameterServer.MAX_SERVERS))
            .defaultValue(1)
            .description("ranks 0..servers-1 each serve a part of every star call's data; equal on every rank")
            .build();
    /** {@value TransportAggregator#COMPRESSION_OPTION}: what gradients are sent as. */
    public static final ConfigOption<Compression> COMPRESSION = ConfigOption.builder(
                    TransportAggregator.COMPRESSION_OPTION,
                    OptionParser.of("none|fp16|bf16|topk:F", Compression.allowed(), Compression::parse))
            .defaultValue(Compression.NONE).defaultText("none")
            .description("float/double SUM and AVG all-reduces sent as they are, in half precision (fp16, bf16) "
                    + "or as the top fraction F by magnitude with error feedback (topk:F); equal on every rank")
            .build();
    /** Every option above, in the order help lists them. */
    public static final List<ConfigOption<?>> ALL = List.of(CHECKSUM, CHUNK_BYTES, BUCKET_BYTES,
            ALL_REDUCE_ALGORITHM, SERVERS, COMPRESSION);

    private AggregatorOptions() {
    }

    private static Map<String, Boolean> checksums() {
        Map<String, Boolean> values = new LinkedHashMap<>();
        values.put(DistributedConfig.CHECKSUM_CRC32C, true);
        values.put(DistributedConfig.CHECKSUM_NONE, false);
        return values;
    }
}
