package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code train --model convnet --spark MASTER} on the command line: what it refuses before Spark
 * starts, and one short run on {@code local[3]} in this JVM (the tests have Spark on their class
 * path), which ends with the same parameters as the same job run by ranks as threads.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TrainSparkCommandTest {
    private static final Pattern SUMMARY = Pattern.compile("train done: ring sync on Spark local\\[3], 3 ranks,"
            + " convnet: 6 steps in [0-9.]+ s \\(2 stages\\), final loss [0-9.]+, held-out accuracy [0-9.]+%"
            + " \\(200 samples\\), 0 examples dropped; a step [0-9.]+ ms in the ranks, [0-9.]+ ms in all"
            + " \\(a stage: [0-9.]+ s of set-up in the ranks, [0-9.]+ s of Spark's own\\); the ranks agree;"
            + " params sha256 ([0-9a-f]{64})");
    private final CapturedOutput output = new CapturedOutput();

    private int run(Map<String, String> env, String... args) {
        output.reset();
        return output.run(Main.standard(env), args);
    }

    private int run(String... args) {
        return run(Map.of(), args);
    }

    /** A Spark run of the ConvNet with {@code extra} flags. */
    private static String[] spark(String master, String... extra) {
        List<String> args = new ArrayList<>(List.of("train", "--model", "convnet", "--spark", master));
        args.addAll(List.of(extra));
        return args.toArray(String[]::new);
    }

    /** Exits with 2 and says {@code message}, before any Spark context starts. */
    private void refused(String message, String... args) {
        refused(Map.of(), message, args);
    }

    private void refused(Map<String, String> env, String message, String... args) {
        assertEquals(2, run(env, args), output.out() + output.err());
        assertTrue(output.err().contains(message), output.err());
        assertFalse(output.out().contains("# spark:"), "refused before Spark started: " + output.out());
    }

    @Test
    void aMasterThatIsNoneOfTheFormsIsRefusedWithTheFormsTaken() {
        refused("ringstar train: --spark 'local[four]' is not a Spark master this command starts; give local[N],"
                + " local-cluster[N,CORES,MEMORY_MB] or spark://HOST:PORT", spark("local[four]"));
        refused("for YARN or Kubernetes submit ringstar.jar with spark-submit", spark("yarn"));
        refused("an executor needs at least 512 MB", spark("local-cluster[2,1,100]"));
        refused("--spark without a master takes spark-submit's, and this is not running under spark-submit",
                "train", "--model", "convnet", "--spark");
    }

    @Test
    void whatSparkDataParallelDoesNotDoIsRefused() {
        refused("--spark trains the ConvNet: give --model convnet", "train", "--spark", "local[2]");
        refused("--spark trains in step (SparkDataParallel); --mode async is not one of its",
                spark("local[2]", "--mode", "async", "--algorithm", "ps"));
        refused("--algorithm must be one of ps|ring|both, was 'all' (with --spark: the async run is not"
                + " SparkDataParallel's)", spark("local[2]", "--algorithm", "all"));
        refused("--model convnet does not take --checkpoint-dir", spark("local[2]", "--checkpoint-dir", "x"));
    }

    @Test
    void theRanksAreTasksOfSparkNotOfALauncher() {
        refused("--world-size 3 exceeds the 2 task slots of local[2]", spark("local[2]", "--world-size", "3"));
        refused("--spark spark://h:7077: only the cluster knows its task slots; give --world-size N",
                spark("spark://h:7077"));
        refused("give no --rank", spark("local[2]", "--rank", "0", "--world-size", "2"));
        refused(Map.of("RANK", "1", "WORLD_SIZE", "2"), "not under a launcher", spark("local[2]"));
        refused("--coordinator does not apply to --spark", spark("local[2]", "--coordinator", "127.0.0.1:29500"));
        refused("transport 'inproc' joins ranks in one JVM, and local-cluster[2,1,1024] runs them in executor JVMs",
                spark("local-cluster[2,1,1024]", "--transport", "inproc"));
        refused("no such option for transport netty", spark("local[2]", "--option", "noSuchOption=1"));
        // ringstar launch checks its ranks' command line first, and refuses this one.
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, Main.standard(Map.of("RANK", "0", "WORLD_SIZE", "2")).check(spark("local[2]"),
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("run the command once, not under a launcher"),
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    @Tag("slow")
    void aShortRunOnLocal3EndsWithTheParametersOfTheSameRunAsThreads() {
        String[] job = {"--algorithm", "ring", "--steps", "6", "--log-every", "3", "--batch-size", "24",
            "--eval-size", "200", "--samples", "1200"};
        List<String> onSpark = new ArrayList<>(List.of(spark("local[3]", job)));
        assertEquals(0, run(onSpark.toArray(String[]::new)), output.out() + output.err());
        String out = output.out();
        assertTrue(out.contains("# spark: master local[3] (application local-"), out);
        assertTrue(out.contains("train: convnet (1960 parameters, Deeplearning4j) through SparkDataParallel on"
                + " local[3]; ring sync, 3 ranks, global batch 24 (8 per rank), 6 steps"), out);
        assertTrue(Pattern.compile("(?m)^step 3/6  loss [0-9.]+  held-out acc +[0-9.]+%  at +[0-9.]+ s  step +[0-9.]+"
                + " ms  \\(in the ranks +[0-9.]+ ms, set-up [0-9.]+ s\\)$").matcher(out).find(), out);
        Matcher summary = SUMMARY.matcher(out);
        assertTrue(summary.find(), out);
        String sparkDigest = summary.group(1);

        List<String> asThreads = new ArrayList<>(List.of("train", "--model", "convnet", "--world-size", "3"));
        asThreads.addAll(List.of(job));
        assertEquals(0, run(asThreads.toArray(String[]::new)), output.out() + output.err());
        Matcher threads = Pattern.compile("train done: ring sync, 3 ranks, .*; params sha256 ([0-9a-f]{64})")
                .matcher(output.out());
        assertTrue(threads.find(), output.out());
        assertEquals(threads.group(1), sparkDigest, "the same batches from the same start, through the same ring");
    }
}
