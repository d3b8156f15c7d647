package io.ringstar.cli.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstar.cli.UsageException;
import io.ringstar.spi.LoopbackPorts;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ranks started the ways users start them, each a {@code java -jar ringstar.jar} process: by
 * {@code ringstar launch}, and by Open MPI's {@code mpirun}, whose variables give each process its
 * rank. The mpirun test needs Open MPI ({@code .ci/run} installs Debian's openmpi-bin and sets
 * {@code RINGSTAR_REQUIRE_MPIRUN=1}, so in CI a missing mpirun fails rather than skips).
 */
// A separate thread: ctrlCStopsEveryRank reads the launcher's output, and a pipe read ignores the
// interrupt that a same-thread timeout would send.
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LauncherIT {
    private static final String[] SMALL_BENCH = {"bench", "--max-bytes", "16K", "--iters", "2", "--warmup", "1",
        "--timeout", "60"};

    private record Outcome(int status, String output) {
    }

    private static Path jar() {
        Path jar = Paths.get(System.getProperty("ringstar.jar", "target/ringstar.jar"));
        assertTrue(Files.isRegularFile(jar), "the shaded jar exists at " + jar.toAbsolutePath());
        return jar;
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * Runs {@code command} to its end, at most 200 s. The output goes to a file, not a pipe: reading
     * a pipe to its end waits, with no bound, until every process holding it (the ranks too) has
     * closed it, so a hung rank would hang the test before the bounded wait even began.
     */
    private static Outcome run(List<String> command) throws IOException, InterruptedException {
        Path output = Files.createTempFile("launcher-it-", ".out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().put("OMP_NUM_THREADS", "1");
        Process process = builder.start();
        try {
            if (!process.waitFor(200, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                fail("not finished within 200 s: " + command + "; output so far:\n"
                        + new String(Files.readAllBytes(output), StandardCharsets.UTF_8));
            }
            return new Outcome(process.exitValue(), new String(Files.readAllBytes(output), StandardCharsets.UTF_8));
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            Files.deleteIfExists(output);
        }
    }

    private static List<String> command(List<String> prefix, String... args) {
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(args));
        return command;
    }

    @Test
    void launchStartsThreeRanksThatFormOneGroup() throws Exception {
        Outcome outcome = run(command(List.of(java(), "-jar", jar().toString(), "launch", "--nproc", "3", "--"),
                SMALL_BENCH));
        assertEquals(0, outcome.status(), outcome.output());
        String output = outcome.output();
        assertTrue(output.contains("[rank 0] # all results right"), output);
        for (int rank = 0; rank < 3; rank++) {
            assertTrue(output.contains("[rank " + rank + "] # config: rank " + rank + " (RANK), world size 3"
                    + " (WORLD_SIZE), coordinator 127.0.0.1:"), output);
        }
        // 4 B to 16 KiB is 13 sizes, two algorithms each, printed by rank 0 alone.
        assertEquals(26, output.lines().filter(line -> line.matches("\\[rank 0] +\\d+ .*")).count(), output);
        assertEquals(0, output.lines().filter(line -> line.matches("\\[rank [12]] +\\d+ .*")).count(), output);
    }

    @Test
    void launchTrainsWithBothAlgorithmsInThreeProcesses() throws Exception {
        Outcome outcome = run(command(List.of(java(), "-jar", jar().toString(), "launch", "--nproc", "3", "--"),
                "train", "--steps", "20", "--log-every", "10", "--batch-size", "60", "--samples", "3000",
                "--eval-size", "600", "--features", "32", "--hidden", "16"));
        assertEquals(0, outcome.status(), outcome.output());
        String output = outcome.output();
        assertTrue(output.contains("[rank 0] train done: ps sync, 3 ranks"), output);
        assertTrue(output.contains("[rank 0] train done: ring sync, 3 ranks"), output);
        assertEquals(4, output.lines().filter(line -> line.matches("\\[rank 0] step +\\d+/20 .*")).count(), output);
        // Only rank 0 reports progress; the others print their configuration and the transport's notice.
        assertTrue(output.lines().noneMatch(line -> line.matches("\\[rank [12]] (step|train).*")), output);
    }

    @Test
    void launchStopsWhenTheRanksAreMisconfigured() throws Exception {
        // Every rank would be told it has 5 ranks while the launcher says 3: launch refuses before starting any.
        Outcome outcome = run(command(List.of(java(), "-jar", jar().toString(), "launch", "--nproc", "3", "--"),
                "bench", "--world-size", "5"));
        assertEquals(UsageException.EXIT_STATUS, outcome.status(), outcome.output());
        assertTrue(outcome.output().contains("5 (--world-size) but 3 (WORLD_SIZE)"), outcome.output());
        assertFalse(outcome.output().contains("[rank "), "no rank was started: " + outcome.output());
    }

    @Test
    void mpirunStartsThreeRanksFromOpenMpisVariables() throws Exception {
        boolean required = "1".equals(System.getenv("RINGSTAR_REQUIRE_MPIRUN"));
        Path mpirun = Paths.get("/usr/bin/mpirun");
        if (!Files.isExecutable(mpirun)) {
            if (required) {
                fail("mpirun is missing although RINGSTAR_REQUIRE_MPIRUN=1 (.ci/run installs openmpi-bin)");
            }
            Assumptions.abort("Open MPI's mpirun is not installed (Debian: apt-get install openmpi-bin)");
        }
        int port = LoopbackPorts.free();
        List<String> prefix = List.of(mpirun.toString(), "--allow-run-as-root", "--oversubscribe", "-np", "3",
                "-x", "OMP_NUM_THREADS", java(), "-jar", jar().toString());
        Outcome outcome = run(command(prefix, command(List.of(SMALL_BENCH), "--coordinator", "127.0.0.1:" + port)
                .toArray(String[]::new)));
        assertEquals(0, outcome.status(), outcome.output());
        String output = outcome.output();
        for (int rank = 0; rank < 3; rank++) {
            assertTrue(output.contains("# config: rank " + rank + " (OMPI_COMM_WORLD_RANK), world size 3"
                    + " (OMPI_COMM_WORLD_SIZE), coordinator 127.0.0.1:" + port + " (--coordinator)"), output);
        }
        assertTrue(output.contains("# all results right"), output);
        assertEquals(26, output.lines().filter(line -> line.matches(" +\\d+ .*")).count(), output);
    }

    @Test
    void ctrlCStopsEveryRank() throws Exception {
        List<String> command = List.of(java(), "-jar", jar().toString(), "launch", "--nproc", "3", "--", "sh", "-c",
                "echo started; exec sleep 120");
        Process launcher = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            java.io.BufferedReader reader = new java.io.BufferedReader(new java.io.InputStreamReader(
                    launcher.getInputStream(), StandardCharsets.UTF_8));
            int started = 0;
            while (started < 3) {
                String line = reader.readLine();
                assertTrue(line != null, "the launcher printed every rank's first line");
                if (line.endsWith("] started")) {
                    started++;
                }
            }
            List<ProcessHandle> ranks = launcher.descendants().toList();
            assertTrue(ranks.size() >= 3, "three ranks run under the launcher: " + ranks);
            // What a terminal sends on Ctrl-C.
            Process kill = new ProcessBuilder("kill", "-INT", Long.toString(launcher.pid())).start();
            assertTrue(kill.waitFor(10, TimeUnit.SECONDS), "kill -INT finished within 10 s");
            assertEquals(0, kill.exitValue());
            assertTrue(launcher.waitFor(20, TimeUnit.SECONDS), "the launcher exited after SIGINT");
            for (ProcessHandle rank : ranks) {
                rank.onExit().get(10, TimeUnit.SECONDS);
                assertTrue(!rank.isAlive(), "rank process " + rank.pid() + " was stopped");
            }
        } finally {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
        }
    }
}
