package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole job killed and restarted, as a user would: {@code launch --nproc 3 -- train
 * --checkpoint-dir D} with one rank SIGKILLed once a checkpoint exists (launch then stops the
 * others), then the same command with {@code --resume}, which must end with the parameters of a
 * run never interrupted: the same {@code params sha256} in rank 0's summary. The run never
 * interrupted is the same command with its three ranks as threads of one JVM.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CheckpointResumeIT {
    /**
     * 400 steps of a small model: a few seconds, so the kill (right after the first checkpoint, at
     * step 20) lands long before the end, and cheap enough for CI.
     */
    private static final List<String> TRAIN = List.of("train", "--algorithm", "ps", "--model", "softmax",
            "--steps", "400", "--log-every", "100", "--batch-size", "60", "--samples", "3000", "--eval-size", "600",
            "--features", "32", "--classes", "4", "--seed", "3");
    /** Rank 0's summary: prefixed with its rank by the launcher; alone, unprefixed, from a run of threads. */
    private static final Pattern DIGEST = Pattern.compile(
            "(?m)^(?:\\[rank 0] )?train done: .*; params sha256 ([0-9a-f]{64})");

    @TempDir
    Path dir;

    private record Outcome(int status, String output, double seconds) {
    }

    private static Path jar() {
        Path jar = Paths.get(System.getProperty("ringstar.jar", "target/ringstar.jar"));
        assertTrue(Files.isRegularFile(jar), "the shaded jar exists at " + jar.toAbsolutePath());
        return jar;
    }

    /**
     * The same training as one JVM whose three ranks are threads: the uninterrupted run that the
     * resumed one must match. Its digest does not depend on how the ranks are placed (the star sums
     * in rank order on every transport), so three more JVMs would add only their start-up here; the
     * launched processes are the killed and the resumed runs'.
     */
    private List<String> threads() {
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", jar().toString()));
        command.addAll(TRAIN);
        command.addAll(List.of("--world-size", "3"));
        return command;
    }

    private List<String> launch(String... extra) {
        List<String> command = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", jar().toString(), "launch", "--nproc", "3", "--"));
        command.addAll(TRAIN);
        command.addAll(List.of(extra));
        return command;
    }

    private Process start(List<String> command, Path output) throws IOException {
        // Output to a file, not a pipe: see LauncherIT.run for why.
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().put("OMP_NUM_THREADS", "1");
        return builder.start();
    }

    private Outcome finish(Process process, Path output, long startNanos) throws Exception {
        try {
            if (!process.waitFor(100, TimeUnit.SECONDS)) {
                fail("not finished within 100 s; output so far:\n" + Files.readString(output));
            }
            return new Outcome(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8),
                    (System.nanoTime() - startNanos) / 1e9);
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }

    private Outcome run(List<String> command) throws Exception {
        Path output = dir.resolve("out-" + System.nanoTime());
        long start = System.nanoTime();
        return finish(start(command, output), output, start);
    }

    private static String digest(Outcome outcome) {
        Matcher matcher = DIGEST.matcher(outcome.output());
        assertTrue(matcher.find(), outcome.output());
        return matcher.group(1);
    }

    /**
     * The launched rank process whose environment says RANK=rank (the launcher's children all run
     * the same command).
     */
    private static Optional<ProcessHandle> rankProcess(Process launcher, int rank) {
        return launcher.descendants().filter(handle -> {
            try {
                byte[] environ = Files.readAllBytes(Paths.get("/proc", Long.toString(handle.pid()), "environ"));
                return Stream.of(new String(environ, StandardCharsets.UTF_8).split("\0"))
                        .anyMatch(entry -> entry.equals("RANK=" + rank));
            } catch (IOException e) {
                return false;
            }
        }).findFirst();
    }

    private static boolean hasCheckpoint(Path directory) throws IOException {
        if (!Files.isDirectory(directory)) {
            return false;
        }
        try (Stream<Path> files = Files.list(directory)) {
            return files.anyMatch(file -> file.getFileName().toString().endsWith(".rsck"));
        }
    }

    @Test
    void aJobKilledMidRunAndResumedEndsWithTheParametersOfAnUninterruptedRun() throws Exception {
        Outcome whole = run(threads());
        assertEquals(0, whole.status(), whole.output());
        String expected = digest(whole);

        Path checkpoints = dir.resolve("checkpoints");
        Path output = dir.resolve("killed.out");
        long start = System.nanoTime();
        Process killed = start(launch("--checkpoint-dir", checkpoints.toString(), "--checkpoint-every", "20"),
                output);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!hasCheckpoint(checkpoints.resolve("ps"))) {
            assertTrue(killed.isAlive(), "the job ended before its first checkpoint:\n" + Files.readString(output));
            assertTrue(System.nanoTime() < deadline, "no checkpoint within 60 s:\n" + Files.readString(output));
            Thread.sleep(20);
        }
        ProcessHandle rank1 = rankProcess(killed, 1).orElseThrow(() -> new AssertionError("no process with RANK=1"));
        long killedAt = System.nanoTime();
        Process kill = new ProcessBuilder("kill", "-KILL", Long.toString(rank1.pid())).start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -KILL rank 1");
        Outcome stopped = finish(killed, output, start);
        double stopSeconds = (System.nanoTime() - killedAt) / 1e9;
        assertNotEquals(0, stopped.status(), stopped.output());
        assertTrue(stopped.output().contains("rank 1"), stopped.output());
        assertTrue(!stopped.output().contains("[rank 0] train done"), "killed before the end:\n" + stopped.output());

        Outcome resumed = run(launch("--checkpoint-dir", checkpoints.toString(), "--checkpoint-every", "20",
                "--resume"));
        assertEquals(0, resumed.status(), resumed.output());
        Matcher from = Pattern.compile("\\[rank 0] train: resuming ps from step (\\d+) ").matcher(resumed.output());
        assertTrue(from.find(), resumed.output());
        int step = Integer.parseInt(from.group(1));
        assertTrue(step >= 20 && step < 400 && step % 20 == 0, "resumed from step " + step);
        assertEquals(expected, digest(resumed), "resumed from step " + step + ":\n" + resumed.output());
        // Informational (timings on a shared machine): what the kill and the restart cost.
        System.out.printf(Locale.ROOT, "# checkpoint IT: uninterrupted %.1f s; killed run stopped %.1f s after the "
                + "SIGKILL; resumed from step %d of 400 in %.1f s%n", whole.seconds(), stopSeconds, step,
                resumed.seconds());
    }
}
