package io.ringstar.cli;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.bench.BenchRun;
import io.ringstar.bench.BenchSettings;
import io.ringstar.bench.JvmMemoryMeter;
import io.ringstar.bench.MemoryMeter;
import io.ringstar.bench.Operation;
import io.ringstar.bench.PlanMismatchException;
import io.ringstar.bench.ResultFile;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.ByteSize;
import io.ringstar.config.ConfigSources;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.RankPlacement;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringstar bench}: sweeps message sizes, element types, operations, algorithms and
 * transports for the star and the ring, in the manner of nccl-tests. By default the ranks of one
 * group are threads of this JVM, over each transport of {@code --transport} in turn; with
 * {@code --rank} this process is one rank of a group whose other ranks are other processes
 * (started by hand, a launcher, or {@code ringstar launch}). The ranks first check that they run
 * the same sweep; every row is then checked against a closed-form result on every rank before it
 * is timed, and a wrong element anywhere fails the run. This class only reads the flags into
 * {@link BenchSettings} and hands them to {@link BenchRun}, the measurement.
 */
@CommandLine.Command(name = "bench", sortOptions = false,
        header = "time the aggregators' and the Communicator's collectives over sizes, types and transports"
                + " (nccl-tests style)",
        synopsisHeading = "%nUsage: ", customSynopsis = "ringstar bench [flags]",
        description = {"", "Runs N ranks as threads of this JVM (or, with --rank, one rank of a group of processes)",
            "and times the star (ps = ParameterServer) and the ring (ring = AllReduceAggregator) on one",
            "tensor per call, for every power-of-two size between --min-bytes and --max-bytes, every",
            "type, algorithm, operation and transport chosen. The ranks first check that they were all",
            "given the same sweep flags (rank 0 broadcasts its own; any rank that differs stops every",
            "rank with status 2, naming the flags). Before timing a row, each rank checks one call",
            "against values with an exact closed-form result; then come the warm-up calls, a barrier",
            "and the timed calls, each timed on its own. With --algorithm comm it times the Communicator's",
            "allReduce, allGather, reduceScatter, broadcast and reduce instead (see --op); their in-place",
            "calls are checked on fresh inputs, then timed on the same buffer over and over.", ""},
        optionListHeading = "Flags:%n",
        footer = {"", "Columns (table; the CSV/JSON names in brackets):",
            "  size(B) [size_bytes]   message size (allgather: the gathered result; reducescatter: the input);",
            "                         count(elem) [count] elements of the type in it",
            "  type, algorithm, op, transport as above; [date, world_size, placement = threads|processes,",
            "                         iters = timed calls] only in the file",
            "  p50(us), p99(us) [time_p50_us, time_p99_us]  median and 99th percentile of the per-call times",
            "                         (HdrHistogram, 3 significant digits; the slowest call when fewer than",
            "                         100): with threads, each call's time is the slowest rank's (with",
            "                         processes, gathered at rank 0 after each row)",
            "  algbw(GB/s) [algbw_gbps]  size / p50 time, GB = 10^9 bytes",
            "  busbw(GB/s) [busbw_gbps]  algbw * bus_factor (nccl-tests'): 2(n-1)/n for reduce and allreduce,",
            "                         (n-1)/n for allgather and reducescatter, 1 for broadcast and comm's reduce:",
            "                         the share of the data an optimal algorithm moves over its busiest link",
            "  #wrong [wrong]         elements of the checked call that differ from the closed form, all ranks",
            "  heap(MiB) [heap_peak_bytes]  peak heap during the row: the sum of each heap pool's peak, an",
            "                         upper bound that includes uncollected garbage",
            "  offheap(MiB) [offheap_peak_bytes]  peak off-heap during the row, sampled every 10 ms: ND4J's",
            "                         native host memory (libnd4j's counter; includes arrays waiting for the",
            "                         garbage collector to free them) + JDK direct buffers + Netty's",
            "                         cleaner-less direct memory + JavaCPP's own; not memory-mapped files",
            "                         (Aeron's log buffers), not the JVM's own native memory, not OpenBLAS",
            "  Memory is per process: with threads, one figure for the JVM and all its ranks; with one",
            "  rank per process, rank 0 gathers every rank's peaks (a '#' line under each row lists them;",
            "  the columns show the largest).",
            "  Per timed call, counted by the kernel from just before the first timed call to just after",
            "  the last (Linux /proc; empty in the file and '-' in the table where there is none):",
            "  cpu(us) [thread_cpu_us]  the calling thread's CPU time, the mean over the ranks",
            "  proc-cpu(us) [process_cpu_us]  the process's (every thread: transport I/O, Aeron's driver,",
            "                         the GC), the mean over the processes; with threads, the one JVM's",
            "  minflt [thread_minor_faults]  the calling thread's minor page faults (fresh memory touched);",
            "                         [process_minor_faults, thread_major_faults, process_major_faults]",
            "  csw vol/inv [thread_voluntary_switches, thread_involuntary_switches]  the calling thread's",
            "                         context switches: given up (waited) / taken away (preempted);",
            "                         [process_voluntary_switches, process_involuntary_switches] the process's",
            "  cpu(us) near p50(us) says a call worked; far below it, with voluntary switches, that it waited.",
            "",
            "Environment: run with OMP_NUM_THREADS=1. The ranks are threads that share the",
            "machine's cores, and ND4J's own native threads would compete with them; when the",
            "variable is unset, ringstar limits ND4J to one thread itself.",
            "",
            "Exit status: 0 all results right, 1 a wrong element or a failed call, 2 usage error",
            "(including ranks given different sweep flags).",
            "",
            "Examples:",
            "  java -jar ringstar.jar bench --world-size 4 --max-bytes 16M",
            "  java -jar ringstar.jar bench --transport inproc,netty,aeron --type both --op all \\",
            "      --output results.csv --plot busbw.png",
            "  java -jar ringstar.jar launch --nproc 3 -- bench --max-bytes 1M --output results.json",
            "  java -jar ringstar.jar bench --algorithm comm --op all --option allReduceAlgorithm=ring",
            "  mpirun -np 3 java -jar ringstar.jar bench --max-bytes 1M"})
public final class BenchCommand implements Command {
    private static final int WORLD_SIZE = CommandDefaults.WORLD_SIZE;
    private static final Duration TIMEOUT = CommandDefaults.TIMEOUT;
    private static final String TRANSPORT = "--" + ConfigSources.TRANSPORT;
    /** Every flag of the command, with its leading {@code --}. */
    public static final List<String> FLAGS = Stream.concat(Stream.of(Algorithm.FLAG, BenchSettings.OP,
            BenchSettings.TYPE, BenchSettings.MIN_BYTES, BenchSettings.MAX_BYTES, BenchSettings.ITERS,
            BenchSettings.WARMUP, BenchSettings.CHUNK_BYTES, BenchSettings.OUTPUT, BenchSettings.PLOT),
            PlacementFlags.names().stream()).toList();

    private final Map<String, String> env;
    private final Supplier<MemoryMeter> memoryMeters;

    @Spec
    private CommandSpec spec;

    @Option(names = "--algorithm", paramLabel = "A", description = "ps | ring | both (default both) | comm (the"
            + " Communicator: its all-reduce picks by size, or --option allReduceAlgorithm=ring|doubling|star"
            + " forces one, and the rows say comm-ring and so on)")
    private String algorithm;
    @Option(names = "--op", paramLabel = "O", description = {"with ps, ring, both: reduce | reduceinto | broadcast,"
            + " several separated by commas, or all (default reduce): reduce = reduceGradients (the ring's"
            + " all-reduce, the star's gather-average-send-back; new result arrays), reduceinto ="
            + " reduceGradientsInto (the same average into a result array made once per row),"
            + " broadcast = broadcastParams (rank 0's values to every rank)",
        "with comm: allreduce | allgather | reducescatter | broadcast | reduce, several separated by commas, or all"
            + " (default allreduce): allReduce(AVG) in place; allGather (the size is the gathered result, each rank"
            + " sends size/n); reduceScatter(AVG) (the size is the input, each rank gets size/n); broadcast from"
            + " rank 0 in place; reduce(AVG) to rank 0 in place. Sizes are rounded down to a multiple of n elements"
            + " for allgather and reducescatter (rows with less than one element per rank are skipped)"})
    private String operation;
    @Option(names = "--type", paramLabel = "T", description = "float | double | both (default float)")
    private String type;
    @Option(names = "--min-bytes", paramLabel = "SIZE", description = "smallest message (default 4); suffixes K, M,"
            + " G (x1024)")
    private String minBytes;
    @Option(names = "--max-bytes", paramLabel = "SIZE", description = "largest message (default 64M, at most 1G;"
            + " 256M is the size nccl-tests and Open MPI comparisons go to, but needs several GB with 4 ranks)")
    private String maxBytes;
    @Option(names = "--iters", paramLabel = "N", description = "timed calls per row (default: 200 for small sizes,"
            + " down to 5, about 256M per rank and row)")
    private Integer iters;
    @Option(names = "--warmup", paramLabel = "N", description = "untimed calls before them (default: enough to move"
            + " about 32M, at most 2000 calls, or a fifth of --iters if more; before the first row, 20000 small"
            + " calls per type, algorithm and operation, so the JIT has compiled the path)")
    private Integer warmup;
    @Option(names = "--chunk-bytes", paramLabel = "SIZE", description = "largest payload of one message (default:"
            + " the library's, 1M)")
    private String chunkBytes;
    @Option(names = "--output", paramLabel = "FILE", description = "also write the rows to FILE.csv or FILE.json"
            + " (rank 0 only; columns below; JSON adds \"meta\" and every rank's memory peaks per row)")
    private String output;
    @Option(names = "--plot", paramLabel = "FILE.png", description = "draw busbw against size (log2 axis), one line"
            + " per algorithm, op, transport and type (rank 0 only; needs a font: fontconfig and DejaVu)")
    private String plot;
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
    private boolean help;

    /** @param env the environment that may name this process's rank (launcher variables) */
    public BenchCommand(Map<String, String> env) {
        this(env, JvmMemoryMeter::new);
    }

    /** @param memoryMeters makes the meter of one run, which the command closes */
    public BenchCommand(Map<String, String> env, Supplier<MemoryMeter> memoryMeters) {
        this.env = Map.copyOf(env);
        this.memoryMeters = memoryMeters;
    }

    @Override
    public void declareOptions(CommandSpec commandSpec) {
        PlacementFlags.declare(commandSpec, WORLD_SIZE, TIMEOUT, Map.of(ConfigSources.TRANSPORT,
                new String[] {"T[,T..]", "with threads: one transport or a list run one after the other, e.g."
                        + " inproc,netty,aeron (default netty); with --rank: one transport"}));
        CommandDefaults.declareVerbose(commandSpec);
    }

    /** Parses a {@code bench} command line (without the word {@code bench}) into its settings. */
    public static BenchSettings parse(List<String> args, Map<String, String> env) throws UsageException {
        BenchCommand command = new BenchCommand(env);
        List<String> line = new ArrayList<>(List.of("bench"));
        line.addAll(args);
        Main.commandLine(List.of(command)).parseArgs(line.toArray(String[]::new));
        return command.settings();
    }

    @Override
    public int run(PrintStream out, PrintStream err) throws UsageException {
        BenchSettings settings = settings();
        if (settings.sizes().isEmpty()) {
            throw new UsageException("no power of two between " + BenchSettings.MIN_BYTES + " " + settings.minBytes()
                    + " and " + BenchSettings.MAX_BYTES + " " + settings.maxBytes()
                    + " holds an element of the types chosen");
        }
        try {
            return BenchRun.run(settings, memoryMeters, out, err);
        } catch (PlanMismatchException e) {
            throw new UsageException(e.getMessage());
        }
    }

    @Override
    public void check() throws UsageException {
        settings();
    }

    @Override
    public Optional<DistributedConfig> rankConfig() throws UsageException {
        return Optional.of(settings().placements().get(0).config());
    }

    /** What the flags and the environment chose, checked before any connection. */
    private BenchSettings settings() throws UsageException {
        Map<String, String> flags = PlacementFlags.given(spec);
        Map<String, String> options = PlacementFlags.options(spec);
        List<RankPlacement> placements = new ArrayList<>();
        String transportList = flags.get(ConfigSources.TRANSPORT);
        if (transportList != null && transportList.contains(",")) {
            List<String> transports = Arrays.stream(transportList.split(",", -1)).map(String::trim).toList();
            if (transports.contains("") || transports.stream().distinct().count() != transports.size()) {
                throw new UsageException(TRANSPORT + " takes transports separated by commas, each once; was '"
                        + transportList + "'");
            }
            if (ConfigSources.rankGiven(flags, env)) {
                throw new UsageException(TRANSPORT + " " + transportList + ": one rank per process runs one"
                        + " transport (every rank must use the same); a list is for ranks as threads (no rank given)");
            }
            for (String transport : transports) {
                Map<String, String> one = new HashMap<>(flags);
                one.put(ConfigSources.TRANSPORT, transport);
                placements.add(PlacementFlags.resolve(one, options, env, WORLD_SIZE, TIMEOUT));
            }
        } else {
            placements.add(PlacementFlags.resolve(flags, options, env, WORLD_SIZE, TIMEOUT));
        }
        int worldSize = placements.get(0).config().worldSize();
        if (worldSize > BenchSettings.LARGEST_WORLD_SIZE) {
            throw new UsageException("world size " + worldSize + " is more than this benchmark runs ("
                    + BenchSettings.LARGEST_WORLD_SIZE + ")");
        }
        try {
            // A wrong value would otherwise stop every rank only once the group has formed.
            AggregatorOptions.ALL_REDUCE_ALGORITHM.value(placements.get(0).config());
        } catch (InvalidConfigException e) {
            throw new UsageException(e.getMessage());
        }
        List<Algorithm> algorithms = FlagValues.algorithms(algorithm, Algorithm.BOTH, true);
        List<Operation> operations = operations(operation, algorithms.contains(Algorithm.COMM));
        List<ElementType> types = switch (FlagValues.choice(BenchSettings.TYPE, type, "float",
                List.of("float", "double", "both"))) {
            case "double" -> List.of(ElementType.DOUBLE);
            case "both" -> List.of(ElementType.FLOAT, ElementType.DOUBLE);
            default -> List.of(ElementType.FLOAT);
        };
        long largest = BenchSettings.LARGEST_MESSAGE;
        long min = FlagValues.byteSize(BenchSettings.MIN_BYTES, minBytes, 4, 1, largest);
        long max = FlagValues.byteSize(BenchSettings.MAX_BYTES, maxBytes, BenchSettings.DEFAULT_MAX_BYTES, 1, largest);
        if (min > max) {
            throw new UsageException(BenchSettings.MIN_BYTES + " " + ByteSize.format(min) + " is larger than "
                    + BenchSettings.MAX_BYTES + " " + ByteSize.format(max));
        }
        int timed = FlagValues.integer(BenchSettings.ITERS, iters, BenchSettings.AUTO, 1, Integer.MAX_VALUE);
        int untimed = FlagValues.integer(BenchSettings.WARMUP, warmup, BenchSettings.AUTO, 0, Integer.MAX_VALUE);
        int chunk = chunkBytes == null ? BenchSettings.AUTO
                : (int) FlagValues.byteSize(BenchSettings.CHUNK_BYTES, chunkBytes, 0, Double.BYTES, largest);
        Optional<Path> outputPath = writablePath(BenchSettings.OUTPUT, output, ".csv or .json",
                ResultFile::isSupported);
        Optional<Path> plotPath = writablePath(BenchSettings.PLOT, plot, ".png",
                path -> path.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".png"));
        return new BenchSettings(List.copyOf(placements), algorithms, operations, types, min, max, timed, untimed,
                chunk, outputPath, plotPath);
    }

    /**
     * The operations {@code --op} picks, one or more of a family separated by commas, or all: for
     * the aggregators reduce, reduceinto and broadcast (default reduce); for the communicator
     * allreduce, allgather, reducescatter, broadcast and reduce (default allreduce). An op of the
     * other family only is refused with a message that says which algorithm has it.
     */
    static List<Operation> operations(String given, boolean communicator) throws UsageException {
        List<Operation> family = Operation.of(communicator);
        List<String> labels = family.stream().map(Operation::label).toList();
        String text = given == null ? (communicator ? Operation.ALL_REDUCE : Operation.REDUCE).label() : given;
        if (text.equals("all")) {
            return family;
        }
        List<Operation> chosen = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String label = part.trim();
            if (!labels.contains(label)) {
                if (!communicator && Operation.of(true).stream().anyMatch(op -> op.label().equals(label))) {
                    throw new UsageException(BenchSettings.OP + " " + label + " is a communicator operation: give "
                            + Algorithm.FLAG + " " + Algorithm.COMM.label());
                }
                throw new UsageException(BenchSettings.OP + (communicator ? " with " + Algorithm.FLAG + " "
                        + Algorithm.COMM.label() : "") + " takes " + String.join("|", labels)
                        + " (several separated by commas) or all, was '" + text + "'");
            }
            Operation op = Operation.of(communicator, label);
            if (chosen.contains(op)) {
                throw new UsageException(BenchSettings.OP + " names " + label + " twice: '" + text + "'");
            }
            chosen.add(op);
        }
        // Declaration order, so that the rows come in the same order whatever order the flag gives.
        return family.stream().filter(chosen::contains).toList();
    }

    /**
     * The path a flag names, checked before any connection: the file name must have one of the
     * extensions, and its directory must exist, so that an hour's sweep does not end unwritable.
     */
    private static Optional<Path> writablePath(String flag, String text, String extensions,
            Predicate<Path> extensionOk) throws UsageException {
        if (text == null) {
            return Optional.empty();
        }
        Path path = Paths.get(text).toAbsolutePath();
        if (path.getFileName() == null || !extensionOk.test(path)) {
            throw new UsageException(flag + " " + text + ": the file name must end in " + extensions);
        }
        Path directory = path.getParent();
        if (directory == null || !Files.isDirectory(directory) || !Files.isWritable(directory)) {
            throw new UsageException(flag + " " + text + ": directory " + directory
                    + " does not exist or is not writable");
        }
        if (Files.isDirectory(path)) {
            throw new UsageException(flag + " " + text + " is a directory");
        }
        return Optional.of(path);
    }
}
