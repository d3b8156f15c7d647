package io.ringstar.bench;

import io.ringstar.ConfigSources;
import io.ringstar.cli.Command;
import io.ringstar.cli.CommandArguments;
import io.ringstar.cli.Main;
import io.ringstar.cli.UsageException;
import io.ringstar.cli.launch.NativeThreads;
import io.ringstar.cli.launch.RankFailureException;
import io.ringstar.cli.launch.RankPlacement;
import io.ringstar.tensor.ElementType;
import io.ringstar.transport.inproc.InProcessTransportProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.DoubleFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * {@code ringstar bench}: sweeps message sizes, element types, operations, algorithms and
 * transports for the star and the ring, in the manner of nccl-tests. By default the ranks of one
 * group are threads of this JVM, over each transport of {@code --transport} in turn; with
 * {@code --rank} this process is one rank of a group whose other ranks are other processes
 * (started by hand, a launcher, or {@code ringstar launch}). The ranks first check that they run
 * the same sweep; every row is then checked against a closed-form result
 * ({@link ClosedFormPattern}) on every rank before it is timed, and a wrong element anywhere fails
 * the run.
 */
public final class BenchCommand implements Command {
    static final String OP = "--op";
    static final String TYPE = "--type";
    static final String MIN_BYTES = "--min-bytes";
    static final String MAX_BYTES = "--max-bytes";
    static final String ITERS = "--iters";
    static final String WARMUP = "--warmup";
    static final String CHUNK_BYTES = "--chunk-bytes";
    static final String OUTPUT = "--output";
    static final String PLOT = "--plot";
    private static final String TRANSPORT = "--" + ConfigSources.TRANSPORT;
    static final List<String> FLAGS = Stream.concat(RankPlacement.FLAGS.stream(), Stream.of(Algorithm.FLAG,
            OP, TYPE, MIN_BYTES, MAX_BYTES, ITERS, WARMUP, CHUNK_BYTES, OUTPUT, PLOT)).toList();
    private static final String IN_PROCESS = InProcessTransportProvider.NAME;
    private static final int DEFAULT_WORLD_SIZE = 4;
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final Map<String, String> env;
    private final Supplier<MemoryMeter> memoryMeters;

    /** @param env the environment that may name this process's rank (launcher variables) */
    public BenchCommand(Map<String, String> env) {
        this(env, JvmMemoryMeter::new);
    }

    /** @param memoryMeters makes the meter of one run, which the command closes */
    public BenchCommand(Map<String, String> env, Supplier<MemoryMeter> memoryMeters) {
        this.env = Map.copyOf(env);
        this.memoryMeters = memoryMeters;
    }

    /** Largest message: the aggregators address a bucket with int byte offsets. */
    static final long LARGEST_MESSAGE = 1L << 30;
    static final long DEFAULT_MAX_BYTES = 64L << 20;
    static final int LARGEST_WORLD_SIZE = 256;
    /** Automatic iteration counts move about this many bytes per rank per row... */
    private static final long AUTO_BYTES_PER_ROW = 256L << 20;
    /** ...with at least this many timed calls, */
    private static final int AUTO_MIN_ITERS = 5;
    /** ...and at most this many. */
    private static final int AUTO_MAX_ITERS = 200;
    /**
     * Automatic warm-up moves at least about this many bytes per rank (a fifth of the timed calls if
     * that is more)...
     */
    private static final long AUTO_WARMUP_BYTES = 32L << 20;
    /**
     * ...in at most this many calls. The path is already compiled by then (see
     * {@link #JIT_WARMUP_CALLS}); these calls settle the size's own buffers and caches. The Open MPI
     * program warms up each row the same way.
     */
    private static final int AUTO_MAX_WARMUP = 2_000;
    /**
     * Before the first row, this many untimed calls of {@link #JIT_WARMUP_ELEMENTS} elements per
     * type, algorithm and operation: enough for the JIT to compile the whole path of a call with
     * its optimizing compiler (C2 compiles a method after about 10 000 calls; a 1 KiB ring
     * all-reduce took 105 us after 2000 warm-up calls and 26 us after 20 000), so that no row, even
     * a sweep's first at a large size, pays for compiling (a 64 KiB row measured 350-580 us first in
     * its sweep, 41 us after the 1 KiB rows).
     */
    private static final int JIT_WARMUP_CALLS = 20_000;
    /** Elements per type of the calls of {@link #JIT_WARMUP_CALLS}. */
    private static final int JIT_WARMUP_ELEMENTS = 256;

    /** One flag that decides which collectives a rank calls and how many, as a number every rank can compare. */
    record PlanEntry(String flag, double value, DoubleFunction<String> describer) {
        String describe(double of) {
            return describer.apply(of);
        }
    }

    /**
     * Everything the command line and the environment chose, checked.
     *
     * @param placements one per transport of {@code --transport}, in the order given; they differ
     *     only in the transport (and, with threads, the free port the ranks meet at)
     */
    public record Settings(List<RankPlacement> placements, List<Algorithm> algorithms, List<Operation> operations,
            List<ElementType> types, long minBytes, long maxBytes, int iters, int warmup, int chunkBytes,
            Optional<Path> output, Optional<Path> plot) {
        static final int AUTO = -1;

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

        /** This process's rank when it is one rank of a group of processes. */
        int rank() {
            return placement().config().rank();
        }

        /** True when this process is one rank of a group of processes, false when it runs them all. */
        boolean oneRankPerProcess() {
            return placement().oneRankPerProcess();
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
        List<PlanEntry> plan() {
            DoubleFunction<String> countOrAuto = value -> value == AUTO ? "auto" : Long.toString((long) value);
            return List.of(
                    new PlanEntry(ITERS, iters, countOrAuto),
                    new PlanEntry(WARMUP, warmup, countOrAuto),
                    new PlanEntry(MIN_BYTES, minBytes, value -> ByteSize.format((long) value)),
                    new PlanEntry(MAX_BYTES, maxBytes, value -> ByteSize.format((long) value)),
                    new PlanEntry(TYPE, mask(types), value -> unmask(value, ElementType.values(),
                            BenchRow::typeName)),
                    new PlanEntry(Algorithm.FLAG, mask(algorithms), value -> unmask(value, Algorithm.values(),
                            Algorithm::label)),
                    new PlanEntry(OP, mask(operations), value -> unmask(value, Operation.values(), Operation::label)),
                    new PlanEntry(CHUNK_BYTES, chunkBytes,
                            value -> value == AUTO ? "default" : ByteSize.format((long) value)));
        }
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

    @Override
    public String name() {
        return "bench";
    }

    @Override
    public String summary() {
        return "time reduceGradients/broadcastParams over sizes, types and transports (nccl-tests style)";
    }

    @Override
    public void printHelp(PrintStream out) {
        out.println("Usage: " + Main.PROGRAM + " bench [flags]");
        out.println();
        out.println("Runs N ranks as threads of this JVM (or, with --rank, one rank of a group of processes)");
        out.println("and times the star (ps = ParameterServer) and the ring (ring = AllReduceAggregator) on one");
        out.println("tensor per call, for every power-of-two size between --min-bytes and --max-bytes, every");
        out.println("type, algorithm, operation and transport chosen. The ranks first check that they were all");
        out.println("given the same sweep flags (rank 0 broadcasts its own; any rank that differs stops every");
        out.println("rank with status 2, naming the flags). Before timing a row, each rank checks one call");
        out.println("against values with an exact closed-form result; then come the warm-up calls, a barrier");
        out.println("and the timed calls, each timed on its own.");
        out.println();
        out.println("Flags:");
        out.println("  --algorithm A         ps | ring | both (default both)");
        out.println("  --op O                reduce | broadcast | all (default reduce): reduce = reduceGradients");
        out.println("                        (the ring's all-reduce, the star's gather-average-send-back),");
        out.println("                        broadcast = broadcastParams (rank 0's values to every rank)");
        out.println("  --type T              float | double | both (default float)");
        out.println("  --transport T[,T..]   with threads: one transport or a list run one after the other,");
        out.println("                        e.g. inproc,netty,aeron (default netty); with --rank: one transport");
        out.println("  --min-bytes SIZE      smallest message (default 4); suffixes K, M, G (x1024)");
        out.println("  --max-bytes SIZE      largest message (default " + ByteSize.format(DEFAULT_MAX_BYTES)
                + ", at most " + ByteSize.format(LARGEST_MESSAGE) + "; 256M is the size nccl-tests");
        out.println("                        and Open MPI comparisons go to, but needs several GB with 4 ranks)");
        out.println("  --iters N             timed calls per row (default: " + AUTO_MAX_ITERS + " for small sizes, down to "
                + AUTO_MIN_ITERS + ",");
        out.println("                        about " + ByteSize.format(AUTO_BYTES_PER_ROW) + " per rank and row)");
        out.println("  --warmup N            untimed calls before them (default: enough to move about "
                + ByteSize.format(AUTO_WARMUP_BYTES) + ", at most " + AUTO_MAX_WARMUP + " calls,");
        out.println("                        or a fifth of --iters if more; before the first row, " + JIT_WARMUP_CALLS
                + " small calls");
        out.println("                        per type, algorithm and operation, so the JIT has compiled the path)");
        out.println("  --chunk-bytes SIZE    largest payload of one message (default: the library's, 1M)");
        out.println("  --output FILE         also write the rows to FILE.csv or FILE.json (rank 0 only; columns below;");
        out.println("                        JSON adds \"meta\" and every rank's memory peaks per row)");
        out.println("  --plot FILE.png       draw busbw against size (log2 axis), one line per algorithm, op,");
        out.println("                        transport and type (rank 0 only; needs a font: fontconfig and DejaVu)");
        out.println("  --help                this text");
        out.println();
        out.println("Columns (table; the CSV/JSON names in brackets):");
        out.println("  size(B) [size_bytes]   message size; count(elem) [count] elements of the type");
        out.println("  type, algorithm, op, transport as above; [date, world_size, placement = threads|processes,");
        out.println("                         iters = timed calls] only in the file");
        out.println("  p50(us), p99(us) [time_p50_us, time_p99_us]  median and 99th percentile (nearest rank; the");
        out.println("                         slowest call when fewer than 100) of the per-call times: with threads,");
        out.println("                         each call's time is the slowest rank's (with processes, gathered");
        out.println("                         at rank 0 after each row)");
        out.println("  algbw(GB/s) [algbw_gbps]  size / p50 time, GB = 10^9 bytes");
        out.println("  busbw(GB/s) [busbw_gbps]  algbw * bus_factor: 2(n-1)/n for reduce, 1 for broadcast (nccl-tests),");
        out.println("                         the share of the data an optimal algorithm moves over its busiest link");
        out.println("  #wrong [wrong]         elements of the checked call that differ from the closed form, all ranks");
        out.println("  heap(MiB) [heap_peak_bytes]  peak heap during the row: the sum of each heap pool's peak, an");
        out.println("                         upper bound that includes uncollected garbage");
        out.println("  offheap(MiB) [offheap_peak_bytes]  peak off-heap during the row, sampled every "
                + JvmMemoryMeter.PERIOD.toMillis() + " ms: ND4J's");
        out.println("                         native host memory (libnd4j's counter; includes arrays waiting for the");
        out.println("                         garbage collector to free them) + JDK direct buffers + Netty's");
        out.println("                         cleaner-less direct memory + JavaCPP's own; not memory-mapped files");
        out.println("                         (Aeron's log buffers), not the JVM's own native memory, not OpenBLAS");
        out.println("  Memory is per process: with threads, one figure for the JVM and all its ranks; with one");
        out.println("  rank per process, rank 0 gathers every rank's peaks (a '#' line under each row lists them;");
        out.println("  the columns show the largest).");
        out.println();
        RankPlacement.printHelp(out, DEFAULT_WORLD_SIZE, DEFAULT_TIMEOUT);
        out.println();
        out.println("Environment: run with OMP_NUM_THREADS=1. The ranks are threads that share the");
        out.println("machine's cores, and ND4J's own native threads would compete with them; when the");
        out.println("variable is unset, ringstar limits ND4J to one thread itself.");
        out.println();
        out.println("Exit status: 0 all results right, 1 a wrong element or a failed call, 2 usage error");
        out.println("(including ranks given different sweep flags).");
        out.println();
        out.println("Examples:");
        out.println("  java -jar ringstar.jar bench --world-size 4 --max-bytes 16M");
        out.println("  java -jar ringstar.jar bench --transport inproc,netty,aeron --type both --op all \\");
        out.println("      --output results.csv --plot busbw.png");
        out.println("  java -jar ringstar.jar launch --nproc 3 -- bench --max-bytes 1M --output results.json");
        out.println("  mpirun -np 3 java -jar ringstar.jar bench --max-bytes 1M");
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
        Settings settings = parse(args, env);
        List<Long> sizes = settings.sizes();
        if (sizes.isEmpty()) {
            throw new UsageException("no power of two between " + MIN_BYTES + " " + settings.minBytes() + " and "
                    + MAX_BYTES + " " + settings.maxBytes() + " holds an element of the types chosen");
        }
        String nativeThreads = NativeThreads.limitForRankThreads();
        String date = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        boolean reports = reports(settings);
        ResultTable table = new ResultTable(out, settings.oneRankPerProcess());
        if (reports) {
            printPreamble(out, settings, sizes, date, nativeThreads);
        }

        List<BenchRow> rows = new ArrayList<>();
        try (MemoryMeter memory = memoryMeters.get()) {
            for (RankPlacement placement : settings.placements()) {
                out.println("# config: " + placement.description());
                out.flush();
                placement.warnIfUnauthenticated(env, err);
                try (TransportSweep sweep = TransportSweep.open(settings, placement, memory)) {
                    sweep.agreeOnPlan();
                    if (reports) {
                        table.printHeader();
                    }
                    sweepSizes(settings, sizes, sweep, reports ? table : null, rows);
                    if (reports) {
                        sweep.bufferBytes().forEach((algorithm, perRank) -> out.printf(Locale.ROOT,
                                "# %s over %s: off-heap bytes held between calls (bufferBytes), per local rank: %s%n",
                                algorithm.label(), sweep.transport(), perRank));
                    }
                }
            }
        } catch (RankFailureException e) {
            out.flush();
            err.println(Main.PROGRAM + " bench: " + e.getMessage());
            if (e.getCause() != null) {
                e.getCause().printStackTrace(err);
            }
            return 1;
        }
        boolean written = !reports || writeFiles(settings, date, nativeThreads, rows, out, err);
        long totalWrong = rows.stream().mapToLong(BenchRow::wrong).sum();
        if (totalWrong > 0) {
            out.println("# FAILED" + (settings.oneRankPerProcess() ? " (seen from rank " + settings.rank() + ")" : "")
                    + ": " + totalWrong + " wrong elements (see #wrong)");
            return 1;
        }
        if (reports) {
            out.println("# all results right (#wrong 0" + (settings.oneRankPerProcess() ? " on every rank" : "") + ")");
        }
        return written ? 0 : 1;
    }

    /** Every size, then every type that fits it, algorithm and operation, on one transport. */
    private static void sweepSizes(Settings settings, List<Long> sizes, TransportSweep sweep, ResultTable table,
            List<BenchRow> rows) {
        if (settings.warmup() == Settings.AUTO) {
            // However large the first size, the first row must not pay for compiling the path.
            for (ElementType type : settings.types()) {
                for (Algorithm algorithm : settings.algorithms()) {
                    for (Operation operation : settings.operations()) {
                        sweep.warmUp(type, algorithm, operation, JIT_WARMUP_ELEMENTS, JIT_WARMUP_CALLS);
                    }
                }
            }
        }
        for (long size : sizes) {
            for (ElementType type : settings.types()) {
                if (size < type.bytes()) {
                    continue;
                }
                List<INDArray> inputs = sweep.inputs(type, Math.toIntExact(size / type.bytes()));
                try {
                    for (Algorithm algorithm : settings.algorithms()) {
                        for (Operation operation : settings.operations()) {
                            BenchRow row = sweep.measure(type, size, inputs, algorithm, operation);
                            rows.add(row);
                            if (table != null) {
                                table.printRow(row);
                            }
                        }
                    }
                } finally {
                    inputs.forEach(INDArray::close);
                }
            }
        }
    }

    /** With one rank per process, rank 0 prints the table and writes the files (the calls keep the ranks in step). */
    private static boolean reports(Settings settings) {
        return !settings.oneRankPerProcess() || settings.rank() == 0;
    }

    /**
     * Writes {@code --output} and {@code --plot}. A file that cannot be written is reported and the
     * other still written.
     *
     * @return whether every file asked for was written
     */
    private static boolean writeFiles(Settings settings, String date, String nativeThreads, List<BenchRow> rows,
            PrintStream out, PrintStream err) {
        String placement = placementName(settings);
        boolean written = true;
        if (settings.output().isPresent()) {
            Path path = settings.output().get();
            try {
                ResultFile.write(path, new ResultFile.Run(date, settings.worldSize(), placement),
                        meta(settings, date, nativeThreads), rows);
                out.println("# wrote " + rows.size() + " rows to " + path);
            } catch (IOException e) {
                err.println(Main.PROGRAM + " bench: cannot write " + path + ": " + e);
                written = false;
            }
        }
        if (settings.plot().isPresent()) {
            Path path = settings.plot().get();
            try {
                BusBandwidthChart.write(path, "ringstar bench: busbw, world size " + settings.worldSize() + ", ranks as "
                        + placement + ", " + date, rows);
                out.println("# drew busbw against size to " + path);
            } catch (IOException | RuntimeException | LinkageError | InternalError e) {
                // Without fontconfig, a font or the AWT library, the JDK's graphics code fails with one of these.
                err.println(Main.PROGRAM + " bench: cannot draw " + path + ": " + e);
                written = false;
            }
        }
        return written;
    }

    private static String placementName(Settings settings) {
        return settings.oneRankPerProcess() ? "processes" : "threads";
    }

    private static Map<String, Object> meta(Settings settings, String date, String nativeThreads) {
        Runtime runtime = Runtime.getRuntime();
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("tool", "ringstar bench");
        meta.put("date", date);
        meta.put("world_size", settings.worldSize());
        meta.put("placement", placementName(settings));
        meta.put("transports", settings.transports());
        meta.put("types", settings.types().stream().map(BenchRow::typeName).toList());
        meta.put("algorithms", settings.algorithms().stream().map(Algorithm::label).toList());
        meta.put("ops", settings.operations().stream().map(Operation::label).toList());
        meta.put("min_bytes", settings.minBytes());
        meta.put("max_bytes", settings.maxBytes());
        meta.put("iters", settings.iters() == Settings.AUTO ? "auto" : settings.iters());
        meta.put("warmup", settings.warmup() == Settings.AUTO ? "auto" : settings.warmup());
        meta.put("chunk_bytes", settings.chunkBytes() == Settings.AUTO ? "default" : settings.chunkBytes());
        meta.put("timeout_s", settings.timeout().toSeconds());
        meta.put("time", "nearest-rank percentiles of the per-call times; each call's time is the slowest"
                + " rank's (processes: gathered at rank 0)");
        meta.put("memory_per", settings.oneRankPerProcess() ? "rank" : "jvm");
        meta.put("memory", "heap: sum of the heap pools' peaks during the row; offheap: peak, sampled every "
                + JvmMemoryMeter.PERIOD.toMillis() + " ms, of ND4J host memory + JDK direct buffers + Netty"
                + " cleaner-less direct memory + JavaCPP; mapped files and JVM-internal memory not counted;"
                + (settings.oneRankPerProcess() ? " one value per rank" : " one value for the JVM that runs every"
                        + " rank as a thread"));
        meta.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        meta.put("processors", runtime.availableProcessors());
        meta.put("max_heap_bytes", runtime.maxMemory());
        meta.put("nd4j_threads", nativeThreads);
        return meta;
    }

    public static Settings parse(List<String> args, Map<String, String> env) throws UsageException {
        CommandArguments arguments = CommandArguments.parse(args, FLAGS);
        List<RankPlacement> placements = new ArrayList<>();
        Optional<String> transportList = arguments.value(TRANSPORT);
        if (transportList.isPresent() && transportList.get().contains(",")) {
            List<String> transports = Arrays.stream(transportList.get().split(",", -1)).map(String::trim).toList();
            if (transports.contains("") || transports.stream().distinct().count() != transports.size()) {
                throw new UsageException(TRANSPORT + " takes transports separated by commas, each once; was '"
                        + transportList.get() + "'");
            }
            if (ConfigSources.rankGiven(arguments.valuesOf(ConfigSources.FLAGS), env)) {
                throw new UsageException(TRANSPORT + " " + transportList.get() + ": one rank per process runs one"
                        + " transport (every rank must use the same); a list is for ranks as threads (no rank given)");
            }
            for (String transport : transports) {
                placements.add(RankPlacement.resolve(CommandArguments.parse(withTransport(args, transport), FLAGS),
                        env, DEFAULT_WORLD_SIZE, DEFAULT_TIMEOUT));
            }
        } else {
            placements.add(RankPlacement.resolve(arguments, env, DEFAULT_WORLD_SIZE, DEFAULT_TIMEOUT));
        }
        int worldSize = placements.get(0).config().worldSize();
        if (worldSize > LARGEST_WORLD_SIZE) {
            throw new UsageException("world size " + worldSize + " is more than this benchmark runs ("
                    + LARGEST_WORLD_SIZE + ")");
        }
        List<Algorithm> algorithms = Algorithm.chosen(arguments, Algorithm.BOTH);
        List<Operation> operations = switch (arguments.choice(OP, "reduce", List.of("reduce", "broadcast", "all"))) {
            case "broadcast" -> List.of(Operation.BROADCAST);
            case "all" -> List.of(Operation.REDUCE, Operation.BROADCAST);
            default -> List.of(Operation.REDUCE);
        };
        List<ElementType> types = switch (arguments.choice(TYPE, "float", List.of("float", "double", "both"))) {
            case "double" -> List.of(ElementType.DOUBLE);
            case "both" -> List.of(ElementType.FLOAT, ElementType.DOUBLE);
            default -> List.of(ElementType.FLOAT);
        };
        long minBytes = arguments.byteSize(MIN_BYTES, 4, 1, LARGEST_MESSAGE);
        long maxBytes = arguments.byteSize(MAX_BYTES, DEFAULT_MAX_BYTES, 1, LARGEST_MESSAGE);
        if (minBytes > maxBytes) {
            throw new UsageException(MIN_BYTES + " " + ByteSize.format(minBytes) + " is larger than " + MAX_BYTES + " "
                    + ByteSize.format(maxBytes));
        }
        int iters = arguments.intValue(ITERS, Settings.AUTO, 1, Integer.MAX_VALUE);
        int warmup = arguments.intValue(WARMUP, Settings.AUTO, 0, Integer.MAX_VALUE);
        int chunkBytes = arguments.value(CHUNK_BYTES).isPresent()
                ? (int) arguments.byteSize(CHUNK_BYTES, 0, Double.BYTES, LARGEST_MESSAGE) : Settings.AUTO;
        Optional<Path> output = writablePath(arguments, OUTPUT, ".csv or .json", ResultFile::isSupported);
        Optional<Path> plot = writablePath(arguments, PLOT, ".png",
                path -> path.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".png"));
        return new Settings(List.copyOf(placements), algorithms, operations, types, minBytes, maxBytes, iters, warmup,
                chunkBytes, output, plot);
    }

    /** {@code args} with the value of {@code --transport} replaced by {@code transport}. */
    private static List<String> withTransport(List<String> args, String transport) {
        List<String> replaced = new ArrayList<>(args);
        for (int i = 0; i < replaced.size(); i++) {
            if (replaced.get(i).equals(TRANSPORT) && i + 1 < replaced.size()) {
                replaced.set(i + 1, transport);
            } else if (replaced.get(i).startsWith(TRANSPORT + "=")) {
                replaced.set(i, TRANSPORT + "=" + transport);
            }
        }
        return replaced;
    }

    /**
     * The path a flag names, checked before any connection: the file name must have one of the
     * extensions, and its directory must exist, so that an hour's sweep does not end unwritable.
     */
    private static Optional<Path> writablePath(CommandArguments arguments, String flag, String extensions,
            Predicate<Path> extensionOk) throws UsageException {
        Optional<String> text = arguments.value(flag);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        Path path = Paths.get(text.get()).toAbsolutePath();
        if (path.getFileName() == null || !extensionOk.test(path)) {
            throw new UsageException(flag + " " + text.get() + ": the file name must end in " + extensions);
        }
        Path directory = path.getParent();
        if (directory == null || !Files.isDirectory(directory) || !Files.isWritable(directory)) {
            throw new UsageException(flag + " " + text.get() + ": directory " + directory
                    + " does not exist or is not writable");
        }
        if (Files.isDirectory(path)) {
            throw new UsageException(flag + " " + text.get() + " is a directory");
        }
        return Optional.of(path);
    }

    private static void printPreamble(PrintStream out, Settings settings, List<Long> sizes, String date,
            String nativeThreads) {
        Runtime runtime = Runtime.getRuntime();
        String transports = String.join(", ", settings.transports());
        out.printf(Locale.ROOT, "# ringstar bench: world size %d, transport %s (%s)%n", settings.worldSize(),
                transports, settings.oneRankPerProcess() ? "one rank per process; a call's time is the slowest rank's"
                        : settings.transports().equals(List.of(IN_PROCESS)) ? "ranks are threads of this JVM"
                        : "ranks are threads of this JVM; over a network transport each has its own sockets on"
                                + " loopback");
        out.printf(Locale.ROOT, "# JVM: %s %s (%s), %d processors, max heap %s; ND4J threads: %s%n",
                System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"),
                System.getProperty("java.vm.vendor"), runtime.availableProcessors(),
                ByteSize.format(runtime.maxMemory()), nativeThreads);
        out.printf(Locale.ROOT, "# date: %s%n", date);
        String iters = settings.iters() == Settings.AUTO ? "auto (" + AUTO_MAX_ITERS + " down to " + AUTO_MIN_ITERS + ")"
                : Integer.toString(settings.iters());
        String warmup = settings.warmup() == Settings.AUTO ? "auto (" + ByteSize.format(AUTO_WARMUP_BYTES) + " or "
                + AUTO_MAX_WARMUP + " calls, at least iters/5)" : Integer.toString(settings.warmup());
        out.printf(Locale.ROOT, "# sizes %s..%s B, types %s, iters %s, warmup %s, timeout %ds, chunk %s%n",
                ByteSize.format(sizes.get(0)), ByteSize.format(sizes.get(sizes.size() - 1)),
                settings.types().stream().map(BenchRow::typeName).collect(Collectors.joining(",")), iters, warmup,
                settings.timeout().toSeconds(),
                settings.chunkBytes() == Settings.AUTO ? "default" : ByteSize.format(settings.chunkBytes()));
        out.println(settings.oneRankPerProcess()
                ? "# memory: each rank's own process; columns show the largest rank, the '#' line below each row every rank"
                : "# memory: this JVM's, shared by all its rank threads (one figure per row, not per rank)");
        out.println("#");
        out.flush();
    }
}
