package io.ringstar.cli;

import io.ringstar.DistributedConfig;
import io.ringstar.cli.spark.DriverJvm;
import io.ringstar.cli.spark.SparkMaster;
import io.ringstar.cli.spark.SparkSetupException;
import io.ringstar.cli.spark.SparkTraining;
import io.ringstar.config.ConfigSources;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.train.CheckpointSettings;
import io.ringstar.train.OverlapSettings;
import io.ringstar.train.SlowRankSettings;
import io.ringstar.train.TrainSettings;
import io.ringstar.train.Trainer;
import io.ringstar.train.TrainingJob;
import io.ringstar.train.convnet.ConvNetJob;
import io.ringstar.train.convnet.ConvNetRun;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ringstar train}: data-parallel SGD of a small model, with gradients averaged every step
 * by the star, the ring, or both one after the other ({@code --algorithm}); {@code --model convnet}
 * is {@link ConvNetJob}'s, the rest {@link TrainingJob}'s. The ranks are placed as
 * for {@code bench} ({@link RankPlacement}): all as threads of this JVM when no rank is given, else
 * this process is one rank. The training itself is {@link Trainer}'s; this class only reads the
 * flags, checks them before any connection, and hands them to the job. With {@code --spark} the
 * ConvNet's ranks are instead the tasks of Spark stages ({@link SparkTraining}), in this JVM or in
 * one started with Spark's jars ({@link DriverJvm}).
 */
@CommandLine.Command(name = "train", sortOptions = false,
        header = "data-parallel SGD (softmax regression, an MLP or a DL4J ConvNet), gradients averaged by the star, "
            + "the ring or the async parameter server",
        synopsisHeading = "%nUsage: ", customSynopsis = "ringstar train [flags]",
        description = {"", "Trains a small classifier with data-parallel SGD: each rank takes its share of every",
            "global batch, computes gradients with ND4J, and the ranks average them every step",
            "through the parameter server (ps) or the ring all-reduce (ring); parameters start",
            "identical through broadcastParams. Rank 0 prints a progress line every --log-every",
            "steps and a summary at the end. With --algorithm both, ps and then ring train the",
            "same model from the same start, so their lines compare. With --overlap (sync mode), the",
            "Communicator averages the gradients in buckets while the backward pass computes them",
            "(GradientBuckets); the start is still broadcast by --algorithm's aggregator (default ring),",
            "and the progress line's comm share is then the wait for the buckets after the backward pass.", "",
            "--model convnet trains the small ConvNet as a Deeplearning4j network through",
            "io.ringstar.dl4j.DataParallel, on Fashion-MNIST when /usr/share/datasets/fashion-mnist holds it",
            "(Debian's dataset-fashion-mnist) and on synthetic images otherwise, and says which first. Its",
            "--algorithm all (the default) runs ps, ring, then the async parameter server, each from the same",
            "start; --plot draws their held-out accuracy against time.", "",
            "--spark MASTER trains the ConvNet on Spark through io.ringstar.spark.SparkDataParallel instead: the",
            "driver (this process) reads the images into an RDD of minibatches, one partition per rank, and runs",
            "one barrier stage per --log-every steps, evaluating on the held-out images between them. MASTER is",
            "local[N], local-cluster[N,CORES,MEMORY_MB] (executor JVMs on this machine) or spark://HOST:PORT;",
            "without a value, spark-submit's. The ranks are the master's task slots, or --world-size. Spark is",
            "not inside ringstar.jar: without it on the class path, the command runs again in a JVM with the",
            "Spark jars the build listed in bench/target/spark-classpath.txt (from the local Maven repository).",
            "--transport, --timeout, the option flags and --option go to the ranks; --algorithm is ps, ring",
            "(the default) or both.", ""},
        optionListHeading = "Flags:%n",
        footer = {"", "Checkpoints: rank 0 alone writes them (the parameters are the same on every rank) and, with",
            "--resume, reads the newest valid one and broadcasts its parameters and step to the others, so",
            "only rank 0 needs to see the directory. A synchronous run resumed after a kill ends with the",
            "same parameters, bit for bit, as one never interrupted (the summary's params sha256 shows it):",
            "each step's batch depends only on the seed and the step. A torn or corrupt newest checkpoint",
            "is reported and the one before it used. In async mode each server checkpoints its own range",
            "of the parameters, its version and the workers' steps in DIR/ps/server-<s> and restores it with",
            "--resume; each worker restarts at the lowest step a server recorded for it, and a server skips",
            "(but answers) steps it had already applied. An async run is not reproducible, resumed or not.",
            "",
            "Async mode (--mode async, the library's AsyncParameterServer): ranks 0..servers-1 serve",
            "(--option servers=N, default 1), each holding its range of the parameters and applying every",
            "gradient as it arrives; the other ranks are workers, and the first worker prints. A straggler",
            "for measurements: --slow-rank R --slow-ms M makes rank R sleep M ms before each of its steps,",
            "in sync and async modes alike.",
            "",
            "Exit status: 0 trained, 1 a rank failed, 2 usage error (bad flag, unreadable data, a",
            "checkpoint of another run to resume from).",
            "",
            "Examples:",
            "  java -jar ringstar.jar train                        # 4 ranks as threads, Netty on loopback",
            "  ./ringstar launch --nproc 4 -- train --model convnet --plot accuracy.png   # the README's job",
            "  java -jar ringstar.jar launch --nproc 4 -- train --algorithm ring --model mlp",
            "  java -jar ringstar.jar train --algorithm ps --mode async --max-staleness 4",
            "  java -jar ringstar.jar launch --nproc 4 -- train --mode async --slow-rank 3 --slow-ms 20",
            "  java -jar ringstar.jar launch --nproc 4 -- train --checkpoint-dir ckpt --resume",
            "  java -jar ringstar.jar launch --nproc 2 -- train --overlap --hidden 2048 --bucket-bytes 1M",
            "  ./ringstar train --model convnet --spark 'local-cluster[4,1,1024]' --plot spark.png  # 4 executor JVMs"})
public final class TrainCommand implements Command {
    private static final String RESUME = "--" + CheckpointSettings.RESUME_FLAG;

    private final Map<String, String> env;

    @Spec
    private CommandSpec spec;

    @Option(names = "--algorithm", paramLabel = "A", description = "ps | ring | both (default both; ps with --mode"
            + " async); --model convnet also all: ps, ring, then ps async, each from the same start (its default)")
    private String algorithm;

    @Option(names = "--spark", arity = "0..1", paramLabel = "MASTER", description = "--model convnet: train on Spark"
            + " through SparkDataParallel: local[N], local-cluster[N,CORES,MEMORY_MB], spark://HOST:PORT; no value:"
            + " spark-submit's master")
    private String spark;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "--model convnet: draw held-out accuracy "
            + "against training seconds, one line per run, into this PNG (written by rank 0's process)")
    private Path plot;

    /** @param env the environment that may name this process's rank (launcher variables) */
    public TrainCommand(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    @Override
    public void declareOptions(CommandSpec commandSpec) {
        List<TrainSettings.FlagHelp> flags = Stream.of(TrainSettings.flagHelp(), CheckpointSettings.flagHelp(),
                OverlapSettings.flagHelp(), SlowRankSettings.flagHelp()).flatMap(List::stream).toList();
        for (TrainSettings.FlagHelp flag : flags) {
            OptionSpec.Builder option = OptionSpec.builder("--" + flag.name()).description(flag.description());
            if (flag.label().isEmpty()) {
                option.type(boolean.class).arity("0");
            } else {
                option.type(String.class).paramLabel(flag.label());
            }
            commandSpec.addOption(option.build());
        }
        // Declared here, after the train flags, so that the help lists it last among them.
        commandSpec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("this text").build());
        PlacementFlags.declare(commandSpec, CommandDefaults.WORLD_SIZE, CommandDefaults.TIMEOUT);
        CommandDefaults.declareVerbose(commandSpec);
    }

    @Override
    public void check() throws UsageException {
        if (spark != null) {
            throw new UsageException("--spark runs every rank as a Spark task: run the command once, not under a"
                    + " launcher");
        }
        RankPlacement placement = placement();
        TrainSettings settings = settings();
        if (settings.model() == TrainSettings.Model.CONVNET) {
            rejectForConvNet();
            convNetRuns(placement, settings);
            return;
        }
        rejectPlot();
        try {
            checkpoints();
            algorithms(settings, overlap());
            slowRank();
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    @Override
    public Optional<DistributedConfig> rankConfig() throws UsageException {
        // A Spark run's ranks are Spark's tasks, configured by the driver, never a launcher's processes.
        return spark != null ? Optional.empty() : Optional.of(placement().config());
    }

    @Override
    public int run(PrintStream out, PrintStream err) throws UsageException {
        if (spark != null) {
            return runOnSpark(out, err);
        }
        RankPlacement placement = placement();
        TrainSettings settings = settings();
        if (settings.model() == TrainSettings.Model.CONVNET) {
            rejectForConvNet();
            return runConvNet(placement, settings, out, err);
        }
        rejectPlot();
        TrainingJob job;
        try {
            CheckpointSettings checkpoints = checkpoints();
            OverlapSettings overlap = overlap();
            SlowRankSettings slow = slowRank();
            job = TrainingJob.prepare(placement, settings, algorithms(settings, overlap), checkpoints, overlap, slow,
                    out);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            // A bad flag value, or a data file that is missing or malformed: the user's to fix, before any connection.
            throw new UsageException(e.getMessage());
        }
        job.run(out);
        return 0;
    }

    private int runConvNet(RankPlacement placement, TrainSettings settings, PrintStream out, PrintStream err)
            throws UsageException {
        ConvNetJob job = new ConvNetJob(placement, settings, convNetRuns(placement, settings), plot, out);
        try {
            // Reads the images and checks the batch split now, so a bad flag or file stops us before connecting.
            job.validate();
        } catch (IllegalArgumentException | UncheckedIOException e) {
            throw new UsageException(e.getMessage());
        }
        try {
            job.run(out);
        } catch (IOException e) {
            err.println(Main.PROGRAM + " train: cannot write the plot " + plot + ": " + e.getMessage());
            return 1;
        }
        return 0;
    }

    /**
     * {@code --spark}: checks every flag here, then trains in this JVM if it can be Spark's driver, or
     * in a child JVM that can ({@link DriverJvm}).
     */
    private int runOnSpark(PrintStream out, PrintStream err) throws UsageException {
        SparkTraining training = sparkTraining();
        Optional<String> why = DriverJvm.whyAnotherJvm(training.master(), env, DriverJvm.sparkLoaded());
        try {
            if (why.isPresent()) {
                List<String> args = spec.commandLine().getParseResult().originalArgs();
                return DriverJvm.runInChild(Main.class.getName(), args, training.master(), why.get(), env,
                        LaunchCommand.JVM_FLAGS, out, err);
            }
            return training.run(env, out, err);
        } catch (SparkSetupException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** The Spark run the flags ask for, every flag checked (the images are read later, by the driver). */
    private SparkTraining sparkTraining() throws UsageException {
        TrainSettings settings = settings();
        if (settings.model() != TrainSettings.Model.CONVNET) {
            throw new UsageException("--spark trains the ConvNet: give --model convnet");
        }
        rejectForConvNet();
        if (settings.mode() == TrainSettings.Mode.ASYNC) {
            throw new UsageException("--spark trains in step (SparkDataParallel); --mode async is not one of its");
        }
        String choice;
        try {
            choice = FlagValues.choice(Algorithm.FLAG, algorithm, Algorithm.RING.label(),
                    List.of(Algorithm.PS.label(), Algorithm.RING.label(), Algorithm.BOTH));
        } catch (UsageException e) {
            throw new UsageException(e.getMessage() + " (with --spark: the async run is not SparkDataParallel's)");
        }
        List<ConvNetRun> runs = choice.equals(Algorithm.BOTH) ? List.of(ConvNetRun.PS, ConvNetRun.RING)
                : List.of(choice.equals(Algorithm.PS.label()) ? ConvNetRun.PS : ConvNetRun.RING);
        SparkMaster master;
        try {
            master = SparkMaster.parse(spark, System.getProperty(SparkMaster.SUBMIT_PROPERTY));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        Map<String, String> flags = new LinkedHashMap<>(PlacementFlags.given(spec));
        if (ConfigSources.rankGiven(flags, env)) {
            throw new UsageException("--spark runs every rank as a Spark task: give no --rank, and run the command"
                    + " once, not under a launcher (its rank variables are set)");
        }
        if (flags.containsKey(ConfigSources.COORDINATOR)) {
            throw new UsageException("--coordinator does not apply to --spark: rank 0's task binds a port on its"
                    + " executor and tells the others");
        }
        int worldSize = sparkWorldSize(master, flags.get(ConfigSources.WORLD_SIZE));
        flags.put(ConfigSources.WORLD_SIZE, Integer.toString(worldSize));
        DistributedConfig config = PlacementFlags.resolve(flags, PlacementFlags.options(spec), env, worldSize,
                CommandDefaults.TIMEOUT).config();
        if (!master.inDriverJvm() && !config.transport().equals("netty") && !config.transport().equals("aeron")) {
            throw new UsageException("transport '" + config.transport() + "' joins ranks in one JVM, and "
                    + master.url() + " runs them in executor JVMs; give --transport netty (the default) or aeron");
        }
        Map<String, String> options = new LinkedHashMap<>(config.options());
        options.put("transport", config.transport());
        options.put("timeout", config.timeout().toSeconds() + "s");
        return new SparkTraining(master, worldSize, settings, runs, options, plot, LaunchCommand.JVM_FLAGS);
    }

    /** {@code --world-size} when given, else the master's task slots; at most the slots, where known. */
    private static int sparkWorldSize(SparkMaster master, String given) throws UsageException {
        int worldSize;
        if (given != null) {
            try {
                worldSize = Integer.parseInt(given.trim());
            } catch (NumberFormatException e) {
                throw new UsageException("--world-size '" + given + "' is not an integer");
            }
            if (worldSize < 1) {
                throw new UsageException("--world-size must be at least 1, was " + worldSize);
            }
        } else if (master.slots() > 0) {
            worldSize = master.slots();
        } else {
            throw new UsageException("--spark " + master.url() + ": only the cluster knows its task slots; give"
                    + " --world-size N, the ranks (one task slot each)");
        }
        if (master.slots() > 0 && worldSize > master.slots()) {
            throw new UsageException("--world-size " + worldSize + " exceeds the " + master.slots() + " task slots of "
                    + master.url() + ": a barrier stage runs one task per rank, all at once");
        }
        return worldSize;
    }

    private List<ConvNetRun> convNetRuns(RankPlacement placement, TrainSettings settings) throws UsageException {
        return FlagValues.convNetRuns(algorithm, settings.mode() == TrainSettings.Mode.ASYNC,
                placement.config().worldSize() == 1);
    }

    private RankPlacement placement() throws UsageException {
        return PlacementFlags.resolve(PlacementFlags.given(spec), PlacementFlags.options(spec), env,
                CommandDefaults.WORLD_SIZE, CommandDefaults.TIMEOUT);
    }

    private TrainSettings settings() throws UsageException {
        try {
            return TrainSettings.fromFlags(given(TrainSettings.flagNames()));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    private void rejectPlot() throws UsageException {
        if (plot != null) {
            throw new UsageException("--plot draws the runs of --model convnet (the bench has its own: bench --plot)");
        }
    }

    private CheckpointSettings checkpoints() {
        return CheckpointSettings.fromFlags(given(CheckpointSettings.VALUE_FLAGS),
                Boolean.TRUE.equals(spec.findOption(RESUME).getValue()));
    }

    private OverlapSettings overlap() {
        return OverlapSettings.fromFlags(Boolean.TRUE.equals(spec.findOption("--" + OverlapSettings.FLAG).getValue()),
                given(List.of(OverlapSettings.BUCKET_BYTES_FLAG)).get(OverlapSettings.BUCKET_BYTES_FLAG));
    }

    private SlowRankSettings slowRank() {
        return SlowRankSettings.fromFlags(given(SlowRankSettings.FLAGS));
    }

    /**
     * The algorithms {@code --algorithm} picks. The ring is always synchronous, so async mode without
     * an explicit algorithm means the star alone; with --overlap the communicator averages, so one run
     * (the ring's start) is enough.
     */
    private List<Algorithm> algorithms(TrainSettings settings, OverlapSettings overlap) throws UsageException {
        String defaultAlgorithm = settings.mode() == TrainSettings.Mode.ASYNC ? Algorithm.PS.label()
                : overlap.enabled() ? Algorithm.RING.label() : Algorithm.BOTH;
        return FlagValues.algorithms(algorithm, defaultAlgorithm, false);
    }

    /** The MLP's flags that the ConvNet's runs do not take: a usage error rather than a flag silently ignored. */
    private void rejectForConvNet() throws UsageException {
        List<String> unsupported = new ArrayList<>(given(Stream.of(CheckpointSettings.VALUE_FLAGS,
                List.of(OverlapSettings.BUCKET_BYTES_FLAG), SlowRankSettings.FLAGS).flatMap(List::stream).toList())
                .keySet());
        for (String flag : List.of(CheckpointSettings.RESUME_FLAG, OverlapSettings.FLAG)) {
            if (Boolean.TRUE.equals(spec.findOption("--" + flag).getValue())) {
                unsupported.add(flag);
            }
        }
        if (!unsupported.isEmpty()) {
            throw new UsageException("--model convnet does not take --" + String.join(", --", unsupported)
                    + " (checkpoints, overlap and slow ranks are the softmax and mlp models' own)");
        }
    }

    /** The values of {@code names} (without {@code --}) that were given, keyed without {@code --}. */
    private Map<String, String> given(List<String> names) {
        Map<String, String> given = new LinkedHashMap<>();
        for (String name : names) {
            String value = spec.findOption("--" + name).getValue();
            if (value != null) {
                given.put(name, value);
            }
        }
        return given;
    }
}
