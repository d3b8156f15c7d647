package io.ringstar.bench;

import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.tensor.ElementType;
import io.ringstar.transport.inproc.InProcessTransportProvider;
import java.io.PrintStream;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * {@code ringstar bench}: sweeps message sizes for the star and the ring, in the manner of
 * nccl-tests. By default the ranks of one group are threads of this JVM, over the in-process
 * transport or over Netty on loopback ({@code --transport}); with {@code --rank} this process is
 * one rank of a group whose other ranks are other processes (started by hand, a launcher, or
 * {@code ringstar launch}). Every size is first checked against a closed-form result
 * ({@link ClosedFormPattern}) on every rank, then timed; a wrong element anywhere fails the run.
 */
final class BenchCommand implements Command {
    static final String OP = "--op";
    static final String TYPE = "--type";
    static final String MIN_BYTES = "--min-bytes";
    static final String MAX_BYTES = "--max-bytes";
    static final String ITERS = "--iters";
    static final String WARMUP = "--warmup";
    static final String CHUNK_BYTES = "--chunk-bytes";
    private static final List<String> FLAGS = Stream.concat(RankPlacement.FLAGS.stream(),
            Stream.of(Algorithm.FLAG, OP, TYPE, MIN_BYTES, MAX_BYTES, ITERS, WARMUP, CHUNK_BYTES)).toList();
    private static final String IN_PROCESS = InProcessTransportProvider.NAME;
    private static final int DEFAULT_WORLD_SIZE = 4;
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final Map<String, String> env;

    /** @param env the environment that may name this process's rank (launcher variables) */
    BenchCommand(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /** Largest message: the aggregators address a bucket with int byte offsets. */
    static final long LARGEST_MESSAGE = 1L << 30;
    static final int LARGEST_WORLD_SIZE = 256;
    /** Automatic iteration counts move about this many bytes per rank per row... */
    private static final long AUTO_BYTES_PER_ROW = 256L << 20;
    /** ...with at least this many timed calls, */
    private static final int AUTO_MIN_ITERS = 5;
    /** ...and at most this many. */
    private static final int AUTO_MAX_ITERS = 200;

    /** Everything the command line and the environment chose, checked. */
    record Settings(RankPlacement placement, List<Algorithm> algorithms, List<Operation> operations,
            ElementType type, long minBytes, long maxBytes, int iters, int warmup, int chunkBytes) {
        static final int AUTO = -1;

        int worldSize() {
            return placement.config().worldSize();
        }

        Duration timeout() {
            return placement.config().timeout();
        }

        String transport() {
            return placement.config().transport();
        }

        /** This process's rank when it is one rank of a group of processes. */
        int rank() {
            return placement.config().rank();
        }

        /** True when this process is one rank of a group of processes, false when it runs them all. */
        boolean oneRankPerProcess() {
            return placement.oneRankPerProcess();
        }

        /** The ranks this process runs: all of them as threads, or the one it was given. */
        int localRanks() {
            return placement.localRanks();
        }

        /** The group rank of local rank {@code local}. */
        int groupRank(int local) {
            return placement.groupRank(local);
        }

        /** Timed calls for one size: {@code --iters}, or fewer calls for larger sizes. */
        int itersFor(long sizeBytes) {
            if (iters != AUTO) {
                return iters;
            }
            long byVolume = AUTO_BYTES_PER_ROW / sizeBytes;
            return (int) Math.max(AUTO_MIN_ITERS, Math.min(AUTO_MAX_ITERS, byVolume));
        }

        /** Untimed calls before the timed ones: {@code --warmup}, or a fifth of the timed ones. */
        int warmupFor(long sizeBytes) {
            return warmup != AUTO ? warmup : Math.max(1, itersFor(sizeBytes) / 5);
        }

        /** The powers of two in {@code [minBytes, maxBytes]} that hold at least one element. */
        List<Long> sizes() {
            List<Long> sizes = new ArrayList<>();
            long first = Long.highestOneBit(Math.max(minBytes, type.bytes()));
            if (first < minBytes || first < type.bytes()) {
                first <<= 1;
            }
            for (long size = first; size <= maxBytes; size <<= 1) {
                sizes.add(size);
            }
            return sizes;
        }
    }

    /** One rank's outcome for one row. */
    private record RankMeasurement(long wrong, long elapsedNanos) {
    }

    /** The aggregators of one algorithm, one per local rank, over the transports all algorithms share. */
    private record AggregatorGroup(List<GradientAggregator> aggregators, List<Transport> transports)
            implements AutoCloseable {
        @Override
        public void close() {
            aggregators.forEach(GradientAggregator::close);
        }
    }

    @Override
    public String name() {
        return "bench";
    }

    @Override
    public String summary() {
        return "time reduceGradients/broadcastParams over a sweep of sizes, ranks as threads (nccl-tests style)";
    }

    @Override
    public void printHelp(PrintStream out) {
        out.println("Usage: " + Main.PROGRAM + " bench [flags]");
        out.println();
        out.println("Runs N ranks as threads of this JVM (or, with --rank, one rank of a group of processes)");
        out.println("over the chosen transport and times the star");
        out.println("(ps = ParameterServer) and the ring (ring = AllReduceAggregator) on one tensor per call,");
        out.println("for every power-of-two size between --min-bytes and --max-bytes. Before timing a size,");
        out.println("each rank checks one call against values with an exact closed-form result and counts");
        out.println("wrong elements (#wrong). Time is the slowest rank's average per call; algbw = size/time;");
        out.println("busbw = algbw * 2(n-1)/n for reduce, algbw for broadcast (GB = 10^9 bytes).");
        out.println();
        out.println("Flags:");
        out.println("  --algorithm A         ps | ring | both (default both)");
        out.println("  --op O                reduce | broadcast | all (default reduce)");
        out.println("  --type T              float | double (default float)");
        out.println("  --min-bytes SIZE      smallest message (default 4); suffixes K, M, G (x1024)");
        out.println("  --max-bytes SIZE      largest message (default 64M, at most 1G)");
        out.println("  --iters N             timed calls per size (default: " + AUTO_MAX_ITERS + " for small sizes, down to "
                + AUTO_MIN_ITERS + ",");
        out.println("                        about " + ByteSize.format(AUTO_BYTES_PER_ROW) + " per rank and row)");
        out.println("  --warmup N            untimed calls before them (default: a fifth of --iters, at least 1)");
        out.println("  --chunk-bytes SIZE    largest payload of one message (default: the library's, 1M)");
        out.println("  --help                this text");
        out.println();
        RankPlacement.printHelp(out, DEFAULT_WORLD_SIZE, DEFAULT_TIMEOUT);
        out.println();
        out.println("Environment: run with OMP_NUM_THREADS=1. The ranks are threads that share the");
        out.println("machine's cores, and ND4J's own native threads would compete with them; when the");
        out.println("variable is unset, ringstar limits ND4J to one thread itself.");
        out.println();
        out.println("Exit status: 0 all results right, 1 a wrong element or a failed call, 2 usage error.");
        out.println();
        out.println("Examples:");
        out.println("  java -jar ringstar.jar bench --world-size 4 --max-bytes 16M");
        out.println("  java -jar ringstar.jar launch --nproc 3 -- bench --max-bytes 1M");
        out.println("  mpirun -np 3 java -jar ringstar.jar bench --max-bytes 1M");
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
        Settings settings = parse(args, env);
        List<Long> sizes = settings.sizes();
        if (sizes.isEmpty()) {
            throw new UsageException("no power of two between " + MIN_BYTES + " " + settings.minBytes() + " and "
                    + MAX_BYTES + " " + settings.maxBytes() + " holds a " + typeName(settings.type()) + " element");
        }
        String nativeThreads = NativeThreads.limitForRankThreads();
        ResultTable table = new ResultTable(out);
        out.println("# config: " + settings.placement().description());
        settings.placement().warnIfUnauthenticated(env, err);
        if (printsTable(settings)) {
            printPreamble(out, settings, sizes, nativeThreads);
            table.printHeader();
        }

        long totalWrong = 0;
        Map<Algorithm, AggregatorGroup> groups = new EnumMap<>(Algorithm.class);
        List<Transport> transports = List.of();
        try (RankThreads threads = new RankThreads(settings.localRanks())) {
            transports = threads.openTransports(settings.placement());
            for (Algorithm algorithm : settings.algorithms()) {
                groups.put(algorithm, openGroup(settings, algorithm, transports));
            }
            for (long size : sizes) {
                int count = Math.toIntExact(size / settings.type().bytes());
                List<INDArray> inputs = threads.run(
                        local -> ClosedFormPattern.create(settings.type(), settings.groupRank(local), count),
                        Duration.ofMinutes(5));
                try {
                    for (Algorithm algorithm : settings.algorithms()) {
                        for (Operation operation : settings.operations()) {
                            List<RankMeasurement> ranks = measure(threads, settings, groups.get(algorithm), inputs,
                                    operation, size);
                            long wrong = ranks.stream().mapToLong(RankMeasurement::wrong).sum();
                            long slowest = ranks.stream().mapToLong(RankMeasurement::elapsedNanos).max().orElse(0);
                            totalWrong += wrong;
                            if (printsTable(settings)) {
                                table.printRow(size, count, typeName(settings.type()), algorithm.label(),
                                        operation.label(), (double) slowest / settings.itersFor(size),
                                        operation.busBandwidthFactor(settings.worldSize()), wrong);
                            }
                        }
                    }
                } finally {
                    inputs.forEach(INDArray::close);
                }
            }
            if (printsTable(settings)) {
                printBufferBytes(out, groups);
            }
        } catch (RankFailureException e) {
            out.flush();
            err.println(Main.PROGRAM + " bench: " + e.getMessage());
            if (e.getCause() != null) {
                e.getCause().printStackTrace(err);
            }
            return 1;
        } finally {
            groups.values().forEach(AggregatorGroup::close);
            transports.forEach(Transport::close);
        }
        if (totalWrong > 0) {
            out.println("# FAILED" + (settings.oneRankPerProcess() ? " on rank " + settings.rank() : "") + ": "
                    + totalWrong + " wrong elements (see #wrong)");
            return 1;
        }
        if (printsTable(settings)) {
            out.println("# all results right (#wrong 0" + (settings.oneRankPerProcess() ? " on rank 0; every other"
                    + " rank exits with status 1 if it saw a wrong element" : "") + ")");
        }
        return 0;
    }

    /** One rank per process: rank 0 prints the table (its own times; the calls keep the ranks in step). */
    private static boolean printsTable(Settings settings) {
        return !settings.oneRankPerProcess() || settings.rank() == 0;
    }

    static Settings parse(List<String> args, Map<String, String> env) throws UsageException {
        CommandArguments arguments = CommandArguments.parse(args, FLAGS);
        RankPlacement placement = RankPlacement.resolve(arguments, env, DEFAULT_WORLD_SIZE, DEFAULT_TIMEOUT);
        if (placement.config().worldSize() > LARGEST_WORLD_SIZE) {
            throw new UsageException("world size " + placement.config().worldSize() + " is more than this benchmark"
                    + " runs (" + LARGEST_WORLD_SIZE + ")");
        }
        List<Algorithm> algorithms = Algorithm.chosen(arguments, Algorithm.BOTH);
        List<Operation> operations = switch (arguments.choice(OP, "reduce", List.of("reduce", "broadcast", "all"))) {
            case "broadcast" -> List.of(Operation.BROADCAST);
            case "all" -> List.of(Operation.REDUCE, Operation.BROADCAST);
            default -> List.of(Operation.REDUCE);
        };
        ElementType type = arguments.choice(TYPE, "float", List.of("float", "double")).equals("float")
                ? ElementType.FLOAT : ElementType.DOUBLE;
        long minBytes = arguments.byteSize(MIN_BYTES, 4, 1, LARGEST_MESSAGE);
        long maxBytes = arguments.byteSize(MAX_BYTES, 64L << 20, 1, LARGEST_MESSAGE);
        if (minBytes > maxBytes) {
            throw new UsageException(MIN_BYTES + " " + ByteSize.format(minBytes) + " is larger than " + MAX_BYTES + " "
                    + ByteSize.format(maxBytes));
        }
        int iters = arguments.intValue(ITERS, Settings.AUTO, 1, Integer.MAX_VALUE);
        int warmup = arguments.intValue(WARMUP, Settings.AUTO, 0, Integer.MAX_VALUE);
        int chunkBytes = arguments.value(CHUNK_BYTES).isPresent()
                ? (int) arguments.byteSize(CHUNK_BYTES, 0, Double.BYTES, LARGEST_MESSAGE) : Settings.AUTO;
        return new Settings(placement, algorithms, operations, type, minBytes, maxBytes, iters, warmup, chunkBytes);
    }

    private static AggregatorGroup openGroup(Settings settings, Algorithm algorithm, List<Transport> transports) {
        List<GradientAggregator> aggregators = new ArrayList<>();
        for (int local = 0; local < transports.size(); local++) {
            DistributedConfig.Builder config = DistributedConfig.builder()
                    .worldSize(settings.worldSize())
                    .rank(settings.groupRank(local))
                    .timeout(settings.timeout());
            if (settings.chunkBytes() != Settings.AUTO) {
                config.option(AllReduceAggregator.CHUNK_BYTES_OPTION, Integer.toString(settings.chunkBytes()));
            }
            // The algorithms take turns on the same transports, so none of them may close them.
            aggregators.add(algorithm.create(config.build(), Transports.borrowed(transports.get(local))));
        }
        return new AggregatorGroup(aggregators, transports);
    }

    /**
     * One row: every rank checks one call, makes the warm-up calls, meets the others at the
     * transport's barrier and times its calls.
     */
    private static List<RankMeasurement> measure(RankThreads threads, Settings settings, AggregatorGroup group,
            List<INDArray> inputs, Operation operation, long size) {
        int iters = settings.itersFor(size);
        int warmup = settings.warmupFor(size);
        // Each call ends within the timeout by contract; this only guards against a bug in that.
        Duration limit = settings.timeout().multipliedBy(iters + warmup + 3L);
        return threads.run(rank -> {
            GradientAggregator aggregator = group.aggregators().get(rank);
            INDArray input = inputs.get(rank);
            INDArray[] checked = operation.call(aggregator, input);
            long wrong = ClosedFormPattern.countWrong(checked[0], settings.type(), operation, settings.worldSize());
            release(checked);
            for (int i = 0; i < warmup; i++) {
                release(operation.call(aggregator, input));
            }
            group.transports().get(rank).barrier();
            long start = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                release(operation.call(aggregator, input));
            }
            return new RankMeasurement(wrong, System.nanoTime() - start);
        }, limit);
    }

    /**
     * Frees results at once: a training step would keep them, but a benchmark that leaves them to
     * the garbage collector measures ND4J's memory pressure rather than the collective.
     */
    private static void release(INDArray[] results) {
        for (INDArray result : results) {
            if (result.closeable()) {
                result.close();
            }
        }
    }

    private static void printPreamble(PrintStream out, Settings settings, List<Long> sizes, String nativeThreads) {
        Runtime runtime = Runtime.getRuntime();
        out.printf(Locale.ROOT, "# ringstar bench: world size %d, transport %s (%s)%n", settings.worldSize(),
                settings.transport(), settings.oneRankPerProcess() ? "one rank per process; times are rank 0's"
                        : settings.transport().equals(IN_PROCESS) ? "ranks are threads of this JVM"
                        : "ranks are threads of this JVM, each with its own sockets on loopback");
        out.printf(Locale.ROOT, "# JVM: %s %s (%s), %d processors, max heap %s; ND4J threads: %s%n",
                System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
                System.getProperty("java.vm.vendor"), runtime.availableProcessors(),
                ByteSize.format(runtime.maxMemory()), nativeThreads);
        out.printf(Locale.ROOT, "# date: %s%n", ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
        String iters = settings.iters() == Settings.AUTO ? "auto (" + AUTO_MAX_ITERS + " down to " + AUTO_MIN_ITERS + ")"
                : Integer.toString(settings.iters());
        String warmup = settings.warmup() == Settings.AUTO ? "auto (iters/5)" : Integer.toString(settings.warmup());
        out.printf(Locale.ROOT, "# sizes %s..%s B, type %s, iters %s, warmup %s, timeout %ds, chunk %s%n",
                ByteSize.format(sizes.get(0)), ByteSize.format(sizes.get(sizes.size() - 1)),
                typeName(settings.type()), iters, warmup, settings.timeout().toSeconds(),
                settings.chunkBytes() == Settings.AUTO ? "default" : ByteSize.format(settings.chunkBytes()));
        out.println("#");
        out.flush();
    }

    private static void printBufferBytes(PrintStream out, Map<Algorithm, AggregatorGroup> groups) {
        for (Map.Entry<Algorithm, AggregatorGroup> entry : groups.entrySet()) {
            List<Long> perRank = entry.getValue().aggregators().stream().map(Algorithm::bufferBytes).toList();
            out.printf(Locale.ROOT, "# %s: off-heap bytes held between calls (bufferBytes), per rank: %s%n",
                    entry.getKey().label(), perRank);
        }
    }

    private static String typeName(ElementType type) {
        return type.name().toLowerCase(Locale.ROOT);
    }
}
