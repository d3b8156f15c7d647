package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.checkpoint.CheckpointDirectory;
import io.ringstar.ranks.Algorithm;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A synchronous run interrupted by a failing rank and resumed with {@code --resume} ends with the
 * parameters of a run that was never interrupted, bit for bit, at 3 ranks over the in-process
 * transport; async resumes from the server's checkpoint; mismatching resumes are refused.
 */
class CheckpointResumeTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int RANKS = 3;
    private static final PrintStream QUIET = new PrintStream(new ByteArrayOutputStream(), true);

    @TempDir
    Path dir;

    /** Rank 1 fails before step {@code step}, as if killed there. */
    private static Trainer.StepHook failAt(int step) {
        return (rank, s) -> {
            if (rank == 1 && s == step) {
                throw new IllegalStateException("injected failure of rank 1 before step " + step);
            }
        };
    }

    /** Records the first step each rank takes. */
    private static Trainer.StepHook firstSteps(Map<Integer, Integer> first) {
        return (rank, step) -> first.putIfAbsent(rank, step);
    }

    /** A resumed run: every rank's outcome, the first step each rank took, what rank 0 printed. */
    private record Resumed(TrainGroup.Result result, Map<Integer, Integer> firstSteps, String printed) {
    }

    /** Runs {@code settings} with {@code --resume} from {@link #dir}, checkpointing every 10 steps. */
    private Resumed resume(int ranks, TrainSettings settings, Algorithm algorithm) {
        Map<Integer, Integer> first = new ConcurrentHashMap<>();
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        TrainGroup.Result result = TrainGroup.run(ranks, TIMEOUT, new Trainer(settings, algorithm,
                new PrintStream(printed, true, StandardCharsets.UTF_8), firstSteps(first),
                new CheckpointSettings(dir, 10, true)));
        return new Resumed(result, first, printed.toString(StandardCharsets.UTF_8));
    }

    private static void assertSameParameters(float[][] expected, float[][] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            assertArrayEquals(expected[i], actual[i], what + ", tensor " + i);
        }
    }

    private static void assertFailed(TrainGroup.Result result) {
        for (int rank = 0; rank < RANKS; rank++) {
            assertNotNull(result.errors().get(rank), "rank " + rank + " of the interrupted run failed");
        }
        assertTrue(result.errors().get(1).getMessage().contains("injected failure"), result.errors().get(1).toString());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ps", "ring"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aRunInterruptedAtStep25AndResumedEndsBitIdenticalToAnUninterruptedOne(String name) throws Exception {
        Algorithm algorithm = Algorithm.of(name);
        TrainSettings settings = SyncTrainingTest.small("mlp");
        Trainer.Outcome whole = TrainGroup.run(RANKS, TIMEOUT, new Trainer(settings, algorithm, QUIET)).rank(0);

        assertFailed(TrainGroup.run(RANKS, TIMEOUT, new Trainer(settings, algorithm, QUIET, failAt(25),
                new CheckpointSettings(dir, 10, false))));
        CheckpointDirectory saved = new CheckpointDirectory(dir.resolve(name));
        assertEquals(List.of(20L, 10L), saved.steps());
        Checkpoint at20 = CheckpointDirectory.read(saved.pathOf(20));
        assertEquals(name, at20.metadata("algorithm"));
        assertEquals("3", at20.metadata("world-size"));
        // Twenty more steps move the parameters: equality below is not an artefact of a standing start.
        assertFalse(java.util.Arrays.equals(whole.parameters()[0], Trainer.flat(at20.tensor("W1"))));

        Resumed run = resume(RANKS, settings, algorithm);
        TrainGroup.Result resumed = run.result();
        Map<Integer, Integer> first = run.firstSteps();
        String text = run.printed();
        assertEquals(Map.of(0, 20, 1, 20, 2, 20), first, text);
        assertTrue(text.contains("train: resuming " + name + " from step 20 (" + saved.pathOf(20) + ")"), text);
        for (int rank = 0; rank < RANKS; rank++) {
            Trainer.Outcome outcome = resumed.rank(rank);
            assertSameParameters(whole.parameters(), outcome.parameters(), "rank " + rank);
            assertEquals(whole.summary().parameterDigest(), outcome.summary().parameterDigest());
            assertEquals(20, outcome.summary().resumedFrom());
            // Steps 0-19 come from the checkpoint, 20-39 from the resumed run: the whole curve matches.
            assertArrayEquals(whole.summary().lossCurve(), outcome.summary().lossCurve(), "rank " + rank);
        }
        assertTrue(text.contains("40 steps (resumed at step 20) in "), text);
        assertTrue(text.contains("params sha256 " + whole.summary().parameterDigest()), text);
        assertEquals(List.of(40L, 30L), saved.steps());
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aTornNewestCheckpointIsReportedAndTheRunResumesFromThePreviousOneWithTheSameResult() throws Exception {
        TrainSettings settings = SyncTrainingTest.small("softmax");
        Trainer.Outcome whole = TrainGroup.run(RANKS, TIMEOUT, new Trainer(settings, Algorithm.RING, QUIET)).rank(0);
        assertFailed(TrainGroup.run(RANKS, TIMEOUT, new Trainer(settings, Algorithm.RING, QUIET, failAt(35),
                new CheckpointSettings(dir, 10, false))));
        CheckpointDirectory saved = new CheckpointDirectory(dir.resolve("ring"));
        assertEquals(List.of(30L, 20L), saved.steps());
        Path newest = saved.pathOf(30);
        try (FileChannel channel = FileChannel.open(newest, StandardOpenOption.WRITE)) {
            channel.truncate(channel.size() - 100);
        }

        Resumed run = resume(RANKS, settings, Algorithm.RING);
        TrainGroup.Result resumed = run.result();
        Map<Integer, Integer> first = run.firstSteps();
        String text = run.printed();
        assertTrue(text.contains("warning: skipping checkpoint " + newest + ": only "), text);
        assertTrue(text.contains("torn"), text);
        assertEquals(Map.of(0, 20, 1, 20, 2, 20), first, text);
        for (int rank = 0; rank < RANKS; rank++) {
            assertSameParameters(whole.parameters(), resumed.rank(rank).parameters(), "rank " + rank);
        }
        // The resumed run rewrote step 30 whole.
        assertEquals(30, CheckpointDirectory.read(newest).step());
    }

    private static Trainer.Outcome single(Trainer trainer) {
        return trainer.runWithParameters(DistributedConfig.builder().build(), null);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aResumeOfAnotherRunIsRefusedNamingWhatDiffers() {
        TrainSettings settings = SyncTrainingTest.small("softmax");
        single(new Trainer(settings, Algorithm.PS, QUIET, new CheckpointSettings(dir, 20, false)));

        Map<String, String> flags = new HashMap<>(Map.of("model", "softmax", "samples", "3000", "features", "32",
                "hidden", "32", "steps", "40", "batch-size", "60", "lr", "0.2", "eval-size", "500", "seed", "7"));
        Trainer otherBatch = new Trainer(TrainSettings.fromFlags(flags), Algorithm.PS, QUIET,
                new CheckpointSettings(dir, 20, true));
        IllegalArgumentException batch = assertThrows(IllegalArgumentException.class, () -> otherBatch.checkResume(1));
        assertTrue(batch.getMessage().contains("checkpoint-000000000040.rsck: it was saved with batch-size 120, "
                + "this run has 60"), batch.getMessage());

        Trainer sameRun = new Trainer(settings, Algorithm.PS, QUIET, new CheckpointSettings(dir, 20, true));
        IllegalArgumentException world = assertThrows(IllegalArgumentException.class, () -> sameRun.checkResume(2));
        assertTrue(world.getMessage().contains("world-size 1, this run has 2"), world.getMessage());

        flags.put("batch-size", "120");
        flags.put("steps", "30");
        Trainer fewerSteps = new Trainer(TrainSettings.fromFlags(flags), Algorithm.PS, QUIET,
                new CheckpointSettings(dir, 20, true));
        IllegalArgumentException steps = assertThrows(IllegalArgumentException.class, () -> fewerSteps.checkResume(1));
        assertTrue(steps.getMessage().contains("at step 40, past --steps 30"), steps.getMessage());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void resumeWithNoCheckpointStartsAtStepZeroAndSaysSoAndAnExtendedRunGoesOn() {
        TrainSettings settings = SyncTrainingTest.small("softmax");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        Trainer.Outcome fresh = single(new Trainer(settings, Algorithm.RING, new PrintStream(printed, true,
                StandardCharsets.UTF_8), new CheckpointSettings(dir, 15, true)));
        String text = printed.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("train: --resume: no valid checkpoint in " + dir.resolve("ring")
                + "; starting ring from step 0"), text);
        assertArrayEquals(SyncTrainingTest.reference(settings).summary().lossCurve(), fresh.summary().lossCurve());

        // The run ended at step 40 (checkpoints after 30 and the last step); resumed with --steps 50 it
        // trains ten more steps, which a 50-step run from scratch matches bit for bit.
        Map<String, String> flags = new HashMap<>(Map.of("model", "softmax", "samples", "3000", "features", "32",
                "hidden", "32", "steps", "50", "batch-size", "120", "lr", "0.2", "eval-size", "500", "seed", "7"));
        TrainSettings longer = TrainSettings.fromFlags(flags);
        Map<Integer, Integer> first = new ConcurrentHashMap<>();
        Trainer.Outcome extended = single(new Trainer(longer, Algorithm.RING, QUIET, firstSteps(first),
                new CheckpointSettings(dir, 15, true)));
        assertEquals(Map.of(0, 40), first);
        assertSameParameters(SyncTrainingTest.reference(longer).parameters(), extended.parameters(), "extended");
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void asyncResumesEachWorkerAtTheStepTheServersCheckpointRecorded() throws Exception {
        Map<String, String> flags = new HashMap<>(Map.of("model", "mlp", "samples", "3000", "features", "32",
                "hidden", "32", "steps", "60", "batch-size", "60", "lr", "0.1", "eval-size", "500", "seed", "5",
                "mode", "async"));
        flags.put("max-staleness", "2");
        flags.put("log-every", "20");
        TrainSettings settings = TrainSettings.fromFlags(flags);
        int ranks = 4;
        int workers = ranks - 1;
        // Worker rank 2 fails before its step 35; by then every worker finished step 32 (staleness 2),
        // so the server checkpointed after 90 updates (ten rounds of one per worker) at least.
        Trainer.StepHook failing = (rank, step) -> {
            if (rank == 2 && step == 35) {
                throw new IllegalStateException("injected failure of rank 2 before step 35");
            }
        };
        TrainGroup.Result interrupted = TrainGroup.run(ranks, TIMEOUT, new Trainer(settings, Algorithm.PS, QUIET,
                failing, new CheckpointSettings(dir, 10, false)));
        assertNotNull(interrupted.errors().get(0), "the server failed too");
        CheckpointDirectory saved = new CheckpointDirectory(dir.resolve("ps").resolve("server-0"));
        long version = saved.steps().get(0);
        assertTrue(version >= 90 && version % 30 == 0, "newest checkpoint " + saved.steps());
        Checkpoint checkpoint = CheckpointDirectory.read(saved.pathOf(version));
        float[] clocks = Trainer.flat(checkpoint.tensor("worker-clocks")
                .castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT));
        assertEquals(Long.toString(ranks), checkpoint.metadata("world-size"));

        Resumed run = resume(ranks, settings, Algorithm.PS);
        TrainGroup.Result resumed = run.result();
        Map<Integer, Integer> first = run.firstSteps();
        String text = run.printed();
        assertTrue(text.contains("train: resuming ps async at step " + (int) clocks[0]), text);
        for (int worker = 1; worker < ranks; worker++) {
            assertEquals((int) clocks[worker - 1], first.get(worker), "worker " + worker + "; " + text);
            assertEquals(60, resumed.rank(worker).summary().steps());
        }
        TrainSummary reporter = resumed.rank(1).summary();
        assertEquals((int) clocks[0], reporter.resumedFrom());
        assertTrue(reporter.heldOutAccuracy() > 0.5, "accuracy " + reporter.heldOutAccuracy());
        // Every worker ends with the servers' final parameters.
        assertSameParameters(resumed.rank(1).parameters(), resumed.rank(3).parameters(), "workers 1 and 3");
        long last = saved.steps().get(0);
        assertEquals(60L * workers, last);
        float[] finalClocks = Trainer.flat(CheckpointDirectory.read(saved.pathOf(last)).tensor("worker-clocks")
                .castTo(org.nd4j.linalg.api.buffer.DataType.FLOAT));
        assertArrayEquals(new float[] {60, 60, 60}, finalClocks);
    }
}
