package io.ringstar.config;

import io.ringstar.AllReduceAggregator;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.ParameterServer;
import io.ringstar.Transports;
import io.ringstar.internal.tensor.TensorLayout;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The options that {@link ParameterServer}, {@link AllReduceAggregator} and {@link Communicator}
 * read, whatever the transport: the checksum, the chunk size, the bucket size, the
 * communicator's all-reduce algorithm, the star's number of servers and the compression; with
 * {@link TraceOptions}' they are core's options. Every
 * configuration may carry them; {@link Transports#options(String)} lists them with the transport's own.
 */
public final class AggregatorOptions {
    /** The most servers the message header's 16-bit field carries. */
    private static final int MAX_SERVERS = 65_535;
    /** Option naming the largest payload of one message in bytes; default 1 MiB. */
    public static final String CHUNK_BYTES_OPTION = "chunkBytes";
    /** The default of {@value #CHUNK_BYTES_OPTION}: 1 MiB. */
    public static final int DEFAULT_CHUNK_BYTES = 1 << 20;
    /**
     * Option naming the largest bucket in bytes; default 1 GiB. The tensors of one data type that
     * hold more (a tensor over 2 GiB, say) go through the algorithm in windows of this size, one
     * after the other, so no offset or length ever overflows an int.
     */
    public static final String BUCKET_BYTES_OPTION = "bucketBytes";
    /** The default of {@value #BUCKET_BYTES_OPTION}: 1 GiB. */
    public static final int DEFAULT_BUCKET_BYTES = 1 << 30;
    /**
     * Option naming how gradients are sent: {@code none} (default), {@code fp16}, {@code bf16} or
     * {@code topk:F}; the same on every rank, or every rank fails with a
     * {@link io.ringstar.CollectiveMismatchException}. It applies to SUM and AVG all-reduces of FLOAT
     * and DOUBLE tensors ({@link io.ringstar.GradientAggregator#reduceGradients}, the communicator's
     * all-reduce); {@link io.ringstar.GradientAggregator#broadcastParams}, HALF, BFLOAT16 and integer
     * tensors are never compressed. fp16/bf16: values rounded to 16 bits (nearest even) and summed in
     * float32, half the bytes. topk:F: per chunk the fraction F largest in magnitude, as (index, value)
     * pairs; the rest is kept on the rank (one dense copy of the gradients per tensor layout) and added
     * to the next call's.
     */
    public static final String COMPRESSION_OPTION = "compression";

    /** {@value DistributedConfig#CHECKSUM_OPTION}: a CRC32C per message, or none (see {@link DistributedConfig}). */
    public static final ConfigOption<Boolean> CHECKSUM = ConfigOption.builder(DistributedConfig.CHECKSUM_OPTION,
                    OptionParser.choice(checksums()))
            .flag("checksum").environmentVariable("RINGSTAR_CHECKSUM")
            .defaultValue(false).defaultText(DistributedConfig.CHECKSUM_NONE)
            .description("a CRC32C of every message, checked before a byte of it is used; the same on every rank")
            .build();
    /** {@value #CHUNK_BYTES_OPTION}: the largest payload of one message. */
    public static final ConfigOption<Integer> CHUNK_BYTES = ConfigOption.builder(
                    CHUNK_BYTES_OPTION, OptionParser.byteSize(1, Integer.MAX_VALUE))
            .defaultValue(DEFAULT_CHUNK_BYTES).defaultText("1M")
            .description("the largest payload of one message of a collective (at least 8 bytes are sent)")
            .build();
    /** {@value #BUCKET_BYTES_OPTION}: the largest bucket of packed tensors. */
    public static final ConfigOption<Integer> BUCKET_BYTES = ConfigOption.builder(
                    BUCKET_BYTES_OPTION,
                    OptionParser.byteSize(Double.BYTES, (int) TensorLayout.MAX_GROUP_BYTES))
            .defaultValue(DEFAULT_BUCKET_BYTES).defaultText("1G")
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
                    OptionParser.intIn(1, MAX_SERVERS))
            .defaultValue(1)
            .description("ranks 0..servers-1 each serve a part of every star call's data; equal on every rank")
            .build();
    /** {@value #COMPRESSION_OPTION}: what gradients are sent as. */
    public static final ConfigOption<Compression> COMPRESSION = ConfigOption.builder(
                    COMPRESSION_OPTION,
                    OptionParser.of("none|fp16|bf16|topk:F", Compression.allowed(), Compression::parse))
            .defaultValue(Compression.NONE).defaultText("none")
            .description("float/double SUM and AVG all-reduces sent as they are, in half precision (fp16, bf16) "
                    + "or as the top fraction F by magnitude with error feedback (topk:F); equal on every rank")
            .build();
    /** Every option above, then the observability's ({@link TraceOptions#ALL}), in the order help lists them. */
    public static final List<ConfigOption<?>> ALL = Stream.concat(
            Stream.of(CHECKSUM, CHUNK_BYTES, BUCKET_BYTES, ALL_REDUCE_ALGORITHM, SERVERS, COMPRESSION),
            TraceOptions.ALL.stream()).collect(Collectors.toUnmodifiableList());

    private AggregatorOptions() {
    }

    private static Map<String, Boolean> checksums() {
        Map<String, Boolean> values = new LinkedHashMap<>();
        values.put(DistributedConfig.CHECKSUM_CRC32C, true);
        values.put(DistributedConfig.CHECKSUM_NONE, false);
        return values;
    }
}
