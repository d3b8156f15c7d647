package io.ringstar.bench;

import io.ringstar.Communicator;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.ByteSize;
import io.ringstar.config.Compression;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.RankPlacement;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.DoubleFunction;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Everything the command line and the environment chose for one {@code bench} run, checked, and
 * what follows from it: the sizes, the calls per row, and the plan every rank must agree on.
 *
 * @param placements one per transport of {@code --transport}, in the order given; they differ
 *     only in the transport (and, with threads, the free port the ranks meet at)
 */
public record BenchSettings(List<RankPlacement> placements, List<Algorithm> algorithms, List<Operation> operations,
        List<ElementType> types, long minBytes, long maxBytes, int iters, int warmup, int chunkBytes,
        Optional<Path> output, Optional<Path> plot) {
    /** The value of {@code iters}, {@code warmup} and {@code chunkBytes} when the flag was not given. */
    public static final int AUTO = -1;
    /** The flags' names, as the command line declares them and the messages and the plan check name them. */
    public static final String OP = "--op";
    public static final String TYPE = "--type";
    public static final String MIN_BYTES = "--min-bytes";
    public static final String MAX_BYTES = "--max-bytes";
    public static final String ITERS = "--iters";
    public static final String WARMUP = "--warmup";
    public static final String CHUNK_BYTES = "--chunk-bytes";
    public static final String OUTPUT = "--output";
    public static final String PLOT = "--plot";
    /** The communicator's all-reduce algorithm, as the plan check names it. */
    static final String ALL_REDUCE_ALGORITHM = "--option " + Communicator.ALGORITHM_OPTION;
    /** The values of {@link Communicator#ALGORITHM_OPTION}, in the order the plan check numbers them. */
    static final List<String> ALL_REDUCE_ALGORITHMS = List.of(Communicator.ALGORITHM_AUTO, Communicator.ALGORITHM_RING,
            Communicator.ALGORITHM_DOUBLING, Communicator.ALGORITHM_STAR);
    /** Largest message: the aggregators address a bucket with int byte offsets. */
    public static final long LARGEST_MESSAGE = 1L << 30;
    /** The largest message when {@link #MAX_BYTES} is not given. */
    public static final long DEFAULT_MAX_BYTES = 64L << 20;
    /** The largest group this benchmark runs. */
    public static final int LARGEST_WORLD_SIZE = 256;
    /** Automatic iteration counts move about this many bytes per rank per row... */
    static final long AUTO_BYTES_PER_ROW = 256L << 20;
    /** ...with at least this many timed calls, */
    static final int AUTO_MIN_ITERS = 5;
    /** ...and at most this many. */
    static final int AUTO_MAX_ITERS = 200;
    /**
     * Automatic warm-up moves at least about this many bytes per rank (a fifth of the timed calls if
     * that is more)...
     */
    static final long AUTO_WARMUP_BYTES = 32L << 20;
    /**
     * ...in at most this many calls. The path is already compiled by then (see
     * {@link SizeSweep#JIT_WARMUP_CALLS}); these calls settle the size's own buffers and caches. The
     * Open MPI program warms up each row the same way.
     */
    static final int AUTO_MAX_WARMUP = 2_000;

    /** One flag that decides which collectives a rank calls and how many, as a number every rank can compare. */
    public record PlanEntry(String flag, double value, DoubleFunction<String> describer) {
        /** How {@code of}, a value of this entry, reads on the command line. */
        public String describe(double of) {
            return describer.apply(of);
        }
    }

    RankPlacement placement() {
        return placements.get(0);
    }

    int worldSize() {
        return placement().config().worldSize();
    }

    Duration timeout() {
        return placement().config().timeout();
    }

    List<String> transports() {
        return placements.stream().map(placement -> placement.config().transport()).toList();
    }

    /** The communicator's all-reduce algorithm: the option's value ({@code auto} when not given). */
    String allReduceAlgorithm() {
        return AggregatorOptions.ALL_REDUCE_ALGORITHM.value(placement().config());
    }

    /** The compression the aggregators and the communicator's all-reduce use: the option's value. */
    Compression compression() {
        return AggregatorOptions.COMPRESSION.value(placement().config());
    }

    /**
     * The algorithm as the table and the files name it: the label; for the communicator with its
     * all-reduce algorithm forced, {@code comm-ring}, {@code comm-doubling} or {@code comm-star}; for
     * the star with more than one server, {@code ps-s2} and so on; and with compression, the
     * option's text after it ({@code ring-fp16}, {@code ps-s4-topk:0.01}).
     */
    public String algorithmLabel(Algorithm algorithm) {
        String allReduce = allReduceAlgorithm();
        String label = algorithm != Algorithm.COMM || allReduce.equals(Communicator.ALGORITHM_AUTO) ? algorithm.label()
                : algorithm.label() + "-" + allReduce;
        int servers = AggregatorOptions.SERVERS.value(placement().config());
        if (servers > 1 && (algorithm == Algorithm.PS || allReduce.equals(Communicator.ALGORITHM_STAR))) {
            label += "-s" + servers;
        }
        Compression compression = compression();
        return compression.equals(Compression.NONE) ? label : label + "-" + compression;
    }

    /** This process's rank when it is one rank of a group of processes. */
    int rank() {
        return placement().config().rank();
    }

    /** True when this process is one rank of a group of processes, false when it runs them all. */
    boolean oneRankPerProcess() {
        return placement().oneRankPerProcess();
    }

    /** With one rank per process, rank 0 prints the table and writes the files (the calls keep the ranks in step). */
    boolean reports() {
        return !oneRankPerProcess() || rank() == 0;
    }

    /** {@code threads} or {@code processes}, as the result files name the placement. */
    String placementName() {
        return oneRankPerProcess() ? "processes" : "threads";
    }

    /** Timed calls for one size: {@code --iters}, or fewer calls for larger sizes. */
    int itersFor(long sizeBytes) {
        if (iters != AUTO) {
            return iters;
        }
        long byVolume = AUTO_BYTES_PER_ROW / sizeBytes;
        return (int) Math.max(AUTO_MIN_ITERS, Math.min(AUTO_MAX_ITERS, byVolume));
    }

    /**
     * Untimed calls before the timed ones: {@code --warmup}, or enough to move about
     * {@link #AUTO_WARMUP_BYTES} (at most {@link #AUTO_MAX_WARMUP} calls), or a fifth of the timed
     * ones if that is more.
     */
    int warmupFor(long sizeBytes) {
        if (warmup != AUTO) {
            return warmup;
        }
        long byVolume = Math.min(AUTO_MAX_WARMUP, AUTO_WARMUP_BYTES / sizeBytes);
        return (int) Math.max(Math.max(1, itersFor(sizeBytes) / 5), byVolume);
    }

    /**
     * The powers of two in {@code [minBytes, maxBytes]} that hold at least one element of the
     * smallest type chosen; a larger type skips the sizes below its element.
     */
    public List<Long> sizes() {
        int smallest = types.stream().mapToInt(ElementType::bytes).min().orElseThrow();
        List<Long> sizes = new ArrayList<>();
        long first = Long.highestOneBit(Math.max(minBytes, smallest));
        if (first < minBytes || first < smallest) {
            first <<= 1;
        }
        for (long size = first; size <= maxBytes; size <<= 1) {
            sizes.add(size);
        }
        return sizes;
    }

    /**
     * The flags every rank must agree on, in a fixed order: they decide which collectives a
     * rank calls, how many, and how the ring cuts its messages.
     */
    public List<PlanEntry> plan() {
        DoubleFunction<String> countOrAuto = value -> value == AUTO ? "auto" : Long.toString((long) value);
        return List.of(
                new PlanEntry(ITERS, iters, countOrAuto),
                new PlanEntry(WARMUP, warmup, countOrAuto),
                new PlanEntry(MIN_BYTES, minBytes, value -> ByteSize.format((long) value)),
                new PlanEntry(MAX_BYTES, maxBytes, value -> ByteSize.format((long) value)),
                new PlanEntry(TYPE, mask(types), value -> unmask(value, ElementType.values(), BenchRow::typeName)),
                new PlanEntry(Algorithm.FLAG, mask(algorithms), value -> unmask(value, Algorithm.values(),
                        Algorithm::label)),
                new PlanEntry(OP, mask(operations), value -> unmask(value, Operation.values(), Operation::label)),
                new PlanEntry(CHUNK_BYTES, chunkBytes,
                        value -> value == AUTO ? "default" : ByteSize.format((long) value)),
                new PlanEntry(ALL_REDUCE_ALGORITHM, ALL_REDUCE_ALGORITHMS.indexOf(allReduceAlgorithm()),
                        value -> value >= 0 ? ALL_REDUCE_ALGORITHMS.get((int) value) : "unknown"));
    }

    private static <E extends Enum<E>> double mask(List<E> chosen) {
        long mask = 0;
        for (E value : chosen) {
            mask |= 1L << value.ordinal();
        }
        return mask;
    }

    private static <E extends Enum<E>> String unmask(double mask, E[] values, Function<E, String> label) {
        return Arrays.stream(values).filter(value -> ((long) mask & (1L << value.ordinal())) != 0).map(label)
                .collect(Collectors.joining(","));
    }
}
