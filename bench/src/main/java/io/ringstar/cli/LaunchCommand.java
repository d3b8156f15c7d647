package io.ringstar.cli;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.cli.launch.Launcher;
import io.ringstar.cli.launch.TraceDirectory;
import io.ringstar.config.NetworkOptions;
import io.ringstar.config.TraceOptions;
import io.ringstar.spi.LoopbackPorts;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code ringstar launch --nproc N -- <command>}: starts N ranks on this machine, the way torchrun
 * does, and watches them ({@link Launcher}; this class reads the flags and, for this jar's own
 * commands, checks the ranks' command line once before any rank starts: a usage error is then
 * reported once, with status 2, and no rank runs). Each rank is a process with {@code RANK},
 * {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code LOCAL_WORLD_SIZE}, {@code MASTER_ADDR=127.0.0.1} and a free
 * {@code MASTER_PORT} in its environment, which ringstar's own commands (and any program that reads
 * torchrun's variables) take as their place in the group. Every line a rank prints comes out
 * prefixed with {@code [rank r]}. When a rank exits with a non-zero status, the others are stopped
 * and the launcher exits with that status, naming the rank and showing its last lines, then where
 * the ranks' trace dumps went ({@link TraceDirectory}: {@value #TRACE_DIR} here, or the command's own
 * trace directory) or how to keep them next time; Ctrl-C stops them all. A command that is one of
 * this jar's ({@code bench}, {@code train}) runs this jar again with the same Java.
 */
@CommandLine.Command(name = "launch", sortOptions = false,
        header = "start N ranks of a command on this machine, prefix their output, stop all when one fails",
        synopsisHeading = "%nUsage: ",
        customSynopsis = "ringstar launch --nproc N [--transport T] [--trace-dir DIR] [--max-time SECONDS] -- <command>"
                + " [flags]",
        description = {"", "Starts N processes on this machine, one per rank, and waits for them. Each gets RANK,",
            "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT",
            "(torchrun's variables), and OMP_NUM_THREADS=1 unless it is set. <command> is one of this",
            "jar's commands (bench, train), which run this jar again with the JVM options in RINGSTAR_JAVA_OPTS,",
            "or any program and its arguments. A command of this jar is checked first, with rank 0's variables:",
            "a bad flag, option or variable is reported once, with status 2, and no rank starts.",
            "Every line a rank prints comes out as '[rank r] line' (stderr stays stderr).", ""},
        parameterListHeading = "After '--':%n", optionListHeading = "%nFlags:%n",
        footer = {"", "When a rank exits with a non-zero status, the others and their children get SIGTERM (and",
            "SIGKILL 5 s later), and the launcher exits with the status of the rank that failed first",
            "after naming it and printing its last 20 lines. Ctrl-C stops every rank the same way.",
            "",
            "Trace dumps: when the ranks have a trace directory (--trace-dir here, which sets RINGSTAR_TRACE_DIR",
            "for them; or the command's own --trace-dir, --option traceDir=DIR or RINGSTAR_TRACE_DIR), each rank",
            "writes its last collectives there when it fails. After a rank failed, the others get up to 2 s to",
            "write theirs before they are stopped, and the launcher lists the job's dumps and the command that",
            "reads them (ringstar report hang DIR). A command not of this jar is seen through RINGSTAR_TRACE_DIR only.",
            "",
            "Example: ringstar launch --nproc 3 -- bench --max-bytes 1M"})
public final class LaunchCommand implements Command {
    static final String NPROC = "--nproc";
    static final String MAX_TIME = "--max-time";
    /** The flag of core's option traceDir ({@link TraceOptions#TRACE_DIR}), which launch passes on as its variable. */
    static final String TRACE_DIR = "--trace-dir";
    static final String TRACE_DIR_VARIABLE = "RINGSTAR_TRACE_DIR";
    /** This jar's commands that a rank may run; {@code launch} itself is not one of them. */
    static final Set<String> JAR_COMMANDS = Set.of("bench", "train");
    static final int LARGEST_NPROC = 256;
    /** JVM options for the ranks, as the {@code ringstar} script reads them for the launcher itself. */
    static final String JAVA_OPTS = "RINGSTAR_JAVA_OPTS";
    /** The JVM flags of the jar's manifest, for when this runs from classes rather than the jar. */
    static final List<String> JVM_FLAGS = List.of("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED");

    private final Map<String, String> env;

    @Spec
    private CommandSpec spec;

    @Option(names = NPROC, paramLabel = "N", description = "ranks to start, 1..256 (required)")
    private Integer nproc;
    @Option(names = "--transport", paramLabel = "T", description = "sets RINGSTAR_TRANSPORT for the ranks (default:"
            + " theirs, netty)")
    private String transport;
    @Option(names = TRACE_DIR, paramLabel = "DIR", description = "sets " + TRACE_DIR_VARIABLE + " for the ranks: each"
            + " writes its trace dump there when it fails, and launch lists them (default: the command's own, if any)")
    private String traceDir;
    @Option(names = MAX_TIME, paramLabel = "SECONDS", description = "stop every rank after this long (default 86400,"
            + " one day)")
    private Integer maxTime;
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
    private boolean help;
    @Parameters(paramLabel = "COMMAND", description = "the command each rank runs, and its arguments")
    private List<String> command = new ArrayList<>();

    /** @param env this process's environment, which the ranks inherit (other launchers' rank variables removed) */
    public LaunchCommand(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /**
     * What the command line asked for.
     *
     * @param traceDir {@value #TRACE_DIR} as given, or {@code null}
     */
    record Settings(int nproc, String transport, String traceDir, Duration maxTime, List<String> command) {
    }

    /** The flags, checked. */
    Settings settings() throws UsageException {
        if (!spec.commandLine().getParseResult().originalArgs().contains("--")) {
            throw new UsageException("no command: put it after '--', for example " + Main.PROGRAM
                    + " launch --nproc 3 -- bench");
        }
        if (command.isEmpty()) {
            throw new UsageException("nothing after '--'; give the command each rank runs, for example bench");
        }
        if (nproc == null) {
            throw new UsageException(NPROC + " N is required: how many ranks to start");
        }
        int ranks = FlagValues.integer(NPROC, nproc, 0, 1, LARGEST_NPROC);
        int maxSeconds = FlagValues.integer(MAX_TIME, maxTime, 86_400, 1, Integer.MAX_VALUE);
        if (traceDir != null) {
            try {
                TraceOptions.TRACE_DIR.parse(traceDir, TRACE_DIR);
            } catch (InvalidConfigException e) {
                throw new UsageException(e.getMessage());
            }
        }
        return new Settings(ranks, transport, traceDir, Duration.ofSeconds(maxSeconds), List.copyOf(command));
    }

    @Override
    public int run(PrintStream out, PrintStream err) throws UsageException {
        Settings settings = settings();
        List<String> commandLine = commandLine(settings.command(), env.getOrDefault(JAVA_OPTS, ""));
        Map<String, String> ranksEnv = new HashMap<>(env);
        if (settings.traceDir() != null) {
            // As given: the ranks run in this directory, and a rank's own --trace-dir then agrees with it.
            ranksEnv.put(TRACE_DIR_VARIABLE, settings.traceDir());
        }
        Launcher launcher = new Launcher(settings.nproc(), settings.transport(), settings.maxTime(), commandLine,
                ranksEnv, null);
        int port = LoopbackPorts.free();
        Map<String, String> rankZero = launcher.rankEnvironment(0, port);
        if (JAR_COMMANDS.contains(settings.command().get(0))) {
            // Every rank would refuse a bad flag or variable alike: said once, before any rank starts.
            int status = Main.standard(rankZero).check(settings.command().toArray(String[]::new), err);
            if (status != 0) {
                return status;
            }
        }
        return launcher.withTraceDumps(traceDumps(settings.command(), rankZero).orElse(null)).run(port, out, err);
    }

    /**
     * Where the ranks of {@code command} write their trace dumps, seen with rank 0's environment:
     * for this jar's commands, the trace directory and job id their own configuration resolves
     * (flag, {@code --option traceDir=DIR} or variable); for any other program, the variable
     * {@value #TRACE_DIR_VARIABLE} alone, and any job id. Empty when the ranks write none.
     */
    static Optional<TraceDirectory> traceDumps(List<String> command, Map<String, String> rankZero) {
        if (JAR_COMMANDS.contains(command.get(0))) {
            Optional<DistributedConfig> config = Main.standard(rankZero).rankConfig(command.toArray(String[]::new));
            return config.flatMap(c -> TraceOptions.TRACE_DIR.ifSet(c).map(dir -> new TraceDirectory(dir,
                    c.option(NetworkOptions.JOB_ID_OPTION).orElse(NetworkOptions.DEFAULT_JOB_ID))));
        }
        String dir = rankZero.get(TRACE_DIR_VARIABLE);
        if (dir == null || dir.isBlank()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new TraceDirectory(TraceOptions.TRACE_DIR.parse(dir, TRACE_DIR_VARIABLE), null));
        } catch (InvalidConfigException e) {
            // The program reads the variable as it likes; a value that names no path leaves no dumps to list.
            return Optional.empty();
        }
    }

    /**
     * The command as a process runs it: this jar's commands through this Java, with the JVM options
     * in {@code javaOpts} (the {@code ringstar} script's {@code RINGSTAR_JAVA_OPTS}, split at
     * whitespace, so {@code -Xmx8g} reaches every rank), and anything else as given.
     */
    static List<String> commandLine(List<String> command, String javaOpts) {
        if (!JAR_COMMANDS.contains(command.get(0))) {
            return command;
        }
        List<String> line = new ArrayList<>();
        line.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        Arrays.stream(javaOpts.trim().split("\\s+")).filter(option -> !option.isEmpty()).forEach(line::add);
        Path codeSource = codeSource();
        if (Files.isRegularFile(codeSource)) {
            line.add("-jar");
            line.add(codeSource.toString());
        } else {
            // Running from classes (tests, an IDE): the manifest's JVM flags must be given by hand.
            line.addAll(JVM_FLAGS);
            line.add("-cp");
            line.add(System.getProperty("java.class.path"));
            line.add(Main.class.getName());
        }
        line.addAll(command);
        return line;
    }

    private static Path codeSource() {
        try {
            return Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot locate ringstar's own jar", e);
        }
    }
}
