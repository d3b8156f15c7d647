package io.ringstar.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.ReduceOp;
import io.ringstar.dl4j.Dl4jFixtures;
import io.ringstar.spi.LoopbackPorts;
import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.launcher.JavaModuleOptions;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;

/**
 * {@link SparkRanks} and {@link SparkDataParallel} on a real Spark cluster on loopback: a standalone
 * Master and Worker started from the Maven jars on the test class path, and three executor JVMs
 * that the Worker starts, with this JVM as the driver. The Worker starts each executor through
 * Spark's launcher from {@code SPARK_HOME}, which it reads from its process environment (so it is
 * a process of its own here: this JVM's environment cannot be set), a folder with an empty
 * {@code jars/}; the executors' class path is this test's, absolute, as
 * {@code spark.executor.extraClassPath}; {@code SPARK_SCALA_VERSION} reaches Spark's launcher
 * through {@code spark.executorEnv}.
 *
 * <p>Cases: a 3-rank all-reduce, exact, each rank in its own executor JVM; and an executor JVM
 * killed with SIGKILL in the middle of a {@code fit}: the stage fails within seconds, Spark runs it
 * again once the Worker has started a replacement, the retry resumes from a checkpoint of a step
 * above 0, and the fit ends with the parameters and updater state of an uninterrupted one, bit for bit.
 */
@Tag("slow")
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkClusterTest {
    private static final int RANKS = 3;
    private static final String LOOPBACK = "127.0.0.1";
    private static final String EXECUTOR_MAIN = "CoarseGrainedExecutorBackend";
    /** How long the cluster may take to offer every rank a slot: three JVMs loading ND4J on two cores. */
    private static final Duration CLUSTER_START = Duration.ofSeconds(120);
    private static final Pattern CHECKPOINT = Pattern.compile("checkpoint-(\\d+)\\.rsck");

    private static Path sparkHome;
    private static Process master;
    private static Process worker;
    private static JavaSparkContext spark;

    @BeforeAll
    static void startCluster() throws Exception {
        sparkHome = Files.createTempDirectory("ringstar-spark-home-");
        Files.createDirectory(sparkHome.resolve("jars"));
        int[] ports = LoopbackPorts.free(3);
        String masterUrl = "spark://" + LOOPBACK + ":" + ports[0];
        master = startDaemon("org.apache.spark.deploy.master.Master", "--host", LOOPBACK, "--port",
                Integer.toString(ports[0]), "--webui-port", Integer.toString(ports[1]));
        // The Worker and the driver retry a registration the Master missed only after seconds (the driver 20 s).
        awaitListening(ports[0]);
        worker = startDaemon("org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK, "--cores",
                Integer.toString(RANKS), "--memory", RANKS + "g", "--webui-port", Integer.toString(ports[2]),
                masterUrl);
        String scalaVersion = scala.util.Properties.versionNumberString();
        SparkConf conf = new SparkConf().setMaster(masterUrl).setAppName("SparkClusterTest")
                .set("spark.driver.host", LOOPBACK).set("spark.driver.bindAddress", LOOPBACK)
                .set("spark.ui.enabled", "false").set("spark.ui.showConsoleProgress", "false")
                .set("spark.executor.cores", "1").set("spark.executor.memory", "1g")
                .set("spark.executor.extraClassPath", classPath())
                // The executors' work is small: the quick compiler alone makes them start sooner on 2 cores.
                .set("spark.executor.extraJavaOptions", "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED"
                        + " -XX:TieredStopAtLevel=1")
                .set("spark.executorEnv.SPARK_SCALA_VERSION", scalaVersion.substring(0, scalaVersion.lastIndexOf('.')))
                .set("spark.executorEnv.SPARK_LOCAL_IP", LOOPBACK)
                .set("spark.executorEnv.OMP_NUM_THREADS", "1");
        spark = new JavaSparkContext(conf);
        ResourceProfile profile = spark.sc().resourceProfileManager().defaultResourceProfile();
        long deadline = System.nanoTime() + CLUSTER_START.toNanos();
        while (spark.sc().maxNumConcurrentTasks(profile) < RANKS) {
            assertTrue(System.nanoTime() < deadline, "the cluster offers " + RANKS + " task slots within "
                    + CLUSTER_START.toSeconds() + " s; it has " + spark.sc().maxNumConcurrentTasks(profile));
            assertTrue(master.isAlive() && worker.isAlive(), "the Master and the Worker run");
            Thread.sleep(100);
        }
    }

    /** Waits until the Master accepts connections on {@code port}. */
    private static void awaitListening(int port) throws InterruptedException {
        long deadline = System.nanoTime() + CLUSTER_START.toNanos();
        while (true) {
            try (Socket socket = new Socket(LOOPBACK, port)) {
                return;
            } catch (IOException notYet) {
                assertTrue(master.isAlive(), "the Master runs; its log: " + sparkHome.resolve("Master.log"));
                assertTrue(System.nanoTime() < deadline, "the Master listens within " + CLUSTER_START.toSeconds()
                        + " s");
                Thread.sleep(50);
            }
        }
    }

    /** A Spark daemon's JVM, on loopback, with Spark's module flags and the SPARK_HOME above. */
    private static Process startDaemon(String mainClass, String... args) throws IOException {
        // The daemons only schedule: a small heap, and the quick compiler alone, so they start sooner on 2 cores.
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        command.addAll(List.of(JavaModuleOptions.defaultModuleOptionArray()));
        command.addAll(List.of("-cp", classPath(), mainClass));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(sparkHome.resolve(mainClass.substring(mainClass.lastIndexOf('.') + 1) + ".log")
                        .toFile());
        builder.environment().put("SPARK_HOME", sparkHome.toString());
        builder.environment().put("SPARK_LOCAL_IP", LOOPBACK);
        builder.environment().put("OMP_NUM_THREADS", "1");
        return builder.start();
    }

    /** This JVM's class path, every entry absolute (a relative one makes the executors fail to deserialize tasks). */
    private static String classPath() {
        return String.join(File.pathSeparator, Arrays.stream(System.getProperty("java.class.path")
                .split(File.pathSeparator)).filter(entry -> !entry.isBlank())
                .map(entry -> Path.of(entry).toAbsolutePath().toString()).toList());
    }

    @AfterAll
    static void stopCluster() throws IOException {
        try {
            if (spark != null) {
                spark.stop();
            }
        } finally {
            for (Process daemon : new Process[] {worker, master}) {
                if (daemon != null) {
                    daemon.descendants().forEach(ProcessHandle::destroyForcibly);
                    daemon.destroyForcibly();
                }
            }
            if (sparkHome != null) {
                try (Stream<Path> files = Files.walk(sparkHome)) {
                    for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(file);
                    }
                }
            }
        }
    }

    /** The executor JVMs of the cluster: the Worker's children that run Spark's executor. */
    private static List<ProcessHandle> executors() {
        return worker.descendants().filter(process -> commandLine(process).contains(EXECUTOR_MAIN))
                .sorted(Comparator.comparingLong(ProcessHandle::pid)).toList();
    }

    /**
     * A process's whole command line. {@code ProcessHandle.Info} gives only its first 4096 bytes on
     * Linux, which an executor's class path fills before its main class: read /proc where it exists.
     */
    private static String commandLine(ProcessHandle process) {
        Path proc = Path.of("/proc", Long.toString(process.pid()), "cmdline");
        try {
            return Files.isReadable(proc) ? new String(Files.readAllBytes(proc), StandardCharsets.UTF_8)
                    : process.info().commandLine().orElse("");
        } catch (IOException gone) {
            return "";
        }
    }

    /** One rank's all-reduced tensor and the process it ran in. */
    record Reduced(int rank, long pid, float[] sum) implements Serializable {
    }

    private static Reduced allReduce(DistributedConfig config, Iterator<Integer> partition) {
        float[] values = new float[1031];
        for (int i = 0; i < values.length; i++) {
            values[i] = (config.rank() + 1) * 1000f + i % 97;
        }
        try (Communicator communicator = Communicator.open(config)) {
            var tensor = Nd4j.createFromArray(values);
            communicator.allReduce(ReduceOp.SUM, tensor);
            return new Reduced(config.rank(), ProcessHandle.current().pid(), tensor.toFloatVector());
        }
    }

    @Test
    @Order(1)
    void threeRanksInThreeExecutorJvmsAllReduceExactly() {
        List<Long> executorPids = executors().stream().map(ProcessHandle::pid).toList();
        assertEquals(RANKS, executorPids.size(), "executor JVMs of the Worker: " + executorPids);

        List<Reduced> results = SparkRanks.run(spark.parallelize(List.of(0, 1, 2), RANKS),
                Map.of("timeout", "60s"), SparkClusterTest::allReduce);

        for (int rank = 0; rank < RANKS; rank++) {
            Reduced result = results.get(rank);
            assertEquals(rank, result.rank(), "results in rank order");
            for (int i = 0; i < result.sum().length; i++) {
                // Ranks 1..3 times 1000, plus 3 times the same i % 97: exact in float.
                assertEquals(6000f + RANKS * (i % 97), result.sum()[i], "rank " + rank + ", element " + i);
            }
        }
        List<Long> rankPids = results.stream().map(Reduced::pid).sorted().toList();
        assertEquals(executorPids, rankPids, "each rank ran in its own executor JVM, none in the driver");
        assertFalse(rankPids.contains(ProcessHandle.current().pid()));
    }

    /** Partition p: 20 minibatches of 8 examples of the MLP, its own data (seeded by partition and index). */
    private static JavaRDD<DataSet> minibatches() {
        List<List<DataSet>> partitions = new ArrayList<>();
        for (int p = 0; p < RANKS; p++) {
            List<DataSet> partition = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                partition.add(Dl4jFixtures.data(8, Dl4jFixtures.MLP_INPUTS, 1000L * p + i));
            }
            partitions.add(partition);
        }
        return spark.parallelize(partitions, RANKS).flatMap(List::iterator);
    }

    private static Map<String, String> fitOptions(Path checkpoints) {
        return new HashMap<>(Map.of("timeout", "60s", "checkpointDir", checkpoints.toString(), "checkpointEvery",
                "25"));
    }

    /** The highest step among the checkpoints in {@code directory}, 0 if none. */
    private static long newestCheckpoint(Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(file -> CHECKPOINT.matcher(file.getFileName().toString())).filter(Matcher::matches)
                    .mapToLong(name -> Long.parseLong(name.group(1))).max().orElse(0);
        } catch (IOException e) {
            return 0;
        }
    }

    @Test
    @Order(2)
    void anExecutorKilledInTheMiddleOfAFitIsRetriedFromItsCheckpointToTheSameParameters() throws Exception {
        int epochs = 10;
        long steps = epochs * 20L;
        Path checkpoints = Files.createTempDirectory(sparkHome, "checkpoints-");
        MultiLayerNetwork uninterrupted = Dl4jFixtures.mlp(300, new Adam(0.01));
        SparkFitSummary whole = SparkDataParallel.fitWithSummary(uninterrupted, minibatches(), epochs,
                fitOptions(Files.createTempDirectory(sparkHome, "reference-")));
        assertEquals(0, whole.stageAttempt(), whole.describe());
        assertEquals(steps, whole.stepsTrained(), whole.describe());

        List<ProcessHandle> executors = executors();
        assertEquals(RANKS, executors.size(), executors.toString());
        AtomicLong killedAt = new AtomicLong();
        AtomicLong killedAtStep = new AtomicLong();
        Thread killer = new Thread(() -> {
            // SIGKILL to one executor as soon as rank 0 has saved a checkpoint past step 0.
            while (killedAt.get() == 0 && !Thread.currentThread().isInterrupted()) {
                long newest = newestCheckpoint(checkpoints);
                if (newest > 0) {
                    executors.get(0).destroyForcibly();
                    killedAt.set(System.currentTimeMillis());
                    killedAtStep.set(newest);
                    return;
                }
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "executor-killer");
        AtomicLong firstFailure = new AtomicLong();
        SparkListener stageFailures = new SparkListener() {
            @Override
            public void onStageCompleted(SparkListenerStageCompleted completed) {
                if (completed.stageInfo().failureReason().isDefined()) {
                    firstFailure.compareAndSet(0, System.currentTimeMillis());
                }
            }
        };
        spark.sc().addSparkListener(stageFailures);
        MultiLayerNetwork interrupted = Dl4jFixtures.mlp(300, new Adam(0.01));
        SparkFitSummary retried;
        killer.start();
        try {
            retried = SparkDataParallel.fitWithSummary(interrupted, minibatches(), epochs, fitOptions(checkpoints));
        } finally {
            killer.interrupt();
            killer.join();
            spark.sc().removeSparkListener(stageFailures);
        }

        assertTrue(killedAt.get() > 0, "an executor was killed during the fit");
        assertFalse(executors.get(0).isAlive());
        assertTrue(firstFailure.get() > 0, "the stage failed");
        long failedAfter = firstFailure.get() - killedAt.get();
        assertTrue(failedAfter < 15_000, "the stage failed " + failedAfter + " ms after the kill");
        assertTrue(retried.stageAttempt() >= 1, retried.describe());
        assertTrue(retried.resumedFromStep() > 0 && retried.resumedFromStep() % 25 == 0
                && retried.resumedFromStep() < steps, "resumed from a checkpointed step above 0 (the kill came after"
                        + " step " + killedAtStep.get() + "'s): " + retried.describe());
        assertEquals(steps - retried.resumedFromStep(), retried.stepsTrained(), retried.describe());
        assertTrue(retried.ranksAgree(), retried.describe());
        assertArrayEquals(Dl4jFixtures.floats(uninterrupted.params()), Dl4jFixtures.floats(interrupted.params()),
                "the same final parameters as the uninterrupted fit");
        assertArrayEquals(Dl4jFixtures.floats(uninterrupted.getUpdater().getStateViewArray()),
                Dl4jFixtures.floats(interrupted.getUpdater().getStateViewArray()), "the same final updater state");
        assertEquals(uninterrupted.getIterationCount(), interrupted.getIterationCount());
        assertEquals(uninterrupted.getEpochCount(), interrupted.getEpochCount());
        System.out.printf("SparkClusterTest: killed executor %d after checkpoint %d; the stage failed %d ms later;"
                + " %s%n", executors.get(0).pid(), killedAtStep.get(), failedAfter, retried.describe());
        assertEquals(RANKS, executors().size(), "the Worker replaced the executor");
    }
}
