package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.cli.launch.TraceDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code ringstar launch} with small shell commands as ranks: environment, prefixes, failures. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LaunchCommandTest {
    private final CapturedOutput output = new CapturedOutput();

    private int launch(Map<String, String> env, String... args) {
        return output.run(Main.standard(env), args);
    }

    private String out() {
        return output.out();
    }

    private String err() {
        return output.err();
    }

    private static Map<String, String> path() {
        return Map.of("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
    }

    @Test
    void everyRankGetsTorchrunsVariablesAndItsOutputIsPrefixed() {
        int status = launch(path(), "launch", "--nproc", "3", "--transport", "inproc", "--", "sh", "-c",
                "echo \"r=$RANK n=$WORLD_SIZE lr=$LOCAL_RANK ln=$LOCAL_WORLD_SIZE at=$MASTER_ADDR:$MASTER_PORT"
                        + " t=$RINGSTAR_TRANSPORT omp=$OMP_NUM_THREADS\"; echo oops >&2");
        assertEquals(0, status, out() + err());
        List<String> lines = out().lines().sorted().toList();
        assertEquals(3, lines.size(), out());
        String port = lines.get(0).replaceAll(".*:(\\d+) .*", "$1");
        assertTrue(Integer.parseInt(port) > 0, lines.get(0));
        for (int rank = 0; rank < 3; rank++) {
            assertEquals("[rank " + rank + "] r=" + rank + " n=3 lr=" + rank + " ln=3 at=127.0.0.1:" + port
                    + " t=inproc omp=1", lines.get(rank));
            assertTrue(err().contains("[rank " + rank + "] oops"), err());
        }
    }

    @Test
    void otherLaunchersRankVariablesDoNotLeakIntoTheRanks() {
        Map<String, String> env = new java.util.HashMap<>(path());
        env.put("OMPI_COMM_WORLD_RANK", "5");
        env.put("SLURM_PROCID", "5");
        env.put("OMP_NUM_THREADS", "2");
        int status = launch(env, "launch", "--nproc", "2", "--", "sh", "-c",
                "echo \"[$OMPI_COMM_WORLD_RANK][$SLURM_PROCID] omp=$OMP_NUM_THREADS\"");
        assertEquals(0, status, out() + err());
        assertTrue(out().contains("[rank 0] [][] omp=2") && out().contains("[rank 1] [][] omp=2"), out());
    }

    @Test
    void aFailingRankStopsTheOthersAndIsNamedWithItsLastLines(@TempDir Path traces) throws IOException {
        // The ranks stand in for ringstar's: rank 1 writes its dump and fails, the others write theirs a
        // little later, as ranks that hear of a peer's failure do, and would then run on.
        Path stale = traces.resolve("ringstar-ringstar-rank2.json");
        Files.writeString(stale, "{}");
        Files.setLastModifiedTime(stale, FileTime.from(Instant.now().minus(Duration.ofHours(1))));
        long start = System.nanoTime();
        int status = launch(path(), "launch", "--nproc", "3", "--trace-dir", traces.toString(), "--", "sh", "-c",
                "dump() { echo '{}' > \"$RINGSTAR_TRACE_DIR/ringstar-ringstar-rank$RANK.json\"; };"
                        + " if [ \"$RANK\" = 1 ]; then echo preparing; sleep 0.3; dump; echo 'rank one gives up' >&2;"
                        + " exit 3; fi;"
                        + " while [ ! -e \"$RINGSTAR_TRACE_DIR/ringstar-ringstar-rank1.json\" ];"
                        + " do sleep 0.01; done; sleep 0.3; dump; exec sleep 60");
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertEquals(3, status, out() + err());
        assertTrue(seconds < 20, "the sleeping ranks were stopped, not waited for: " + seconds + " s");
        assertTrue(err().contains("rank 1 exited with status 3; stopping ranks [0, 2]"), err());
        assertTrue(err().contains("  preparing") && err().contains("  rank one gives up"), err());
        // After the failure's lines: the directory, this job's dumps (not an earlier job's), how to read them.
        String dir = traces.toAbsolutePath().toString();
        String expected = "ringstar launch: trace dumps in " + dir + " (3 files):\n"
                + "  ringstar-ringstar-rank0.json\n"
                + "  ringstar-ringstar-rank1.json\n"
                + "  ringstar-ringstar-rank2.json\n"
                + "ringstar launch: read them with: ringstar report hang " + dir + "\n";
        assertTrue(err().contains(expected), err());
        assertTrue(err().indexOf(expected) > err().indexOf("  rank one gives up"), err());
        assertFalse(err().contains("--trace-dir DIR"), err());
    }

    @Test
    void theTraceDirectoryComesFromTheRanksOwnConfiguration() {
        Map<String, String> rankZero = Map.of("RANK", "0", "WORLD_SIZE", "3", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", "29500", "PATH", "/usr/bin:/bin");
        Path here = Path.of("traces").toAbsolutePath();
        assertEquals(Optional.empty(), LaunchCommand.traceDumps(List.of("train"), rankZero));
        assertEquals(Optional.of(new TraceDirectory(here, "ringstar")),
                LaunchCommand.traceDumps(List.of("train", "--trace-dir", "traces"), rankZero));
        assertEquals(Optional.of(new TraceDirectory(here, "job-7")), LaunchCommand.traceDumps(List.of("bench",
                "--option", "traceDir=traces", "--option", "jobId=job-7"), rankZero));
        Map<String, String> withVariable = new java.util.HashMap<>(rankZero);
        withVariable.put("RINGSTAR_TRACE_DIR", "/tmp/ringstar-traces");
        assertEquals(Optional.of(new TraceDirectory(Path.of("/tmp/ringstar-traces"), "ringstar")),
                LaunchCommand.traceDumps(List.of("train", "--steps", "5"), withVariable));
        // Any other program: the variable alone, and the launcher cannot know its job id.
        assertEquals(Optional.of(new TraceDirectory(Path.of("/tmp/ringstar-traces"), null)),
                LaunchCommand.traceDumps(List.of("sh", "-c", "true"), withVariable));
        assertEquals(Optional.empty(), LaunchCommand.traceDumps(List.of("sh", "-c", "true"), rankZero));
    }

    @Test
    void launchsTraceDirectoryMustAgreeWithTheCommandsOwn() {
        assertEquals(2, launch(path(), "launch", "--nproc", "2", "--trace-dir", "/tmp/a", "--", "train",
                "--trace-dir", "/tmp/b"));
        assertTrue(err().contains("/tmp/a") && err().contains("/tmp/b") && err().contains("disagree"), err());
        assertFalse(err().contains("ringstar launch: 2 ranks"), "no rank started: " + err());
    }

    @Test
    void theRankThatFailedFirstIsNamedNotTheOnesThatFollowed() throws java.io.IOException {
        // Rank 0 fails as soon as rank 1 has gone (its pid no longer answers): after it, and usually within
        // the same poll of the launcher, whatever the machine's load does to the ranks' start-up.
        java.nio.file.Path pidFile = java.nio.file.Files.createTempFile("ringstar-rank1-", ".pid");
        java.nio.file.Files.delete(pidFile);
        int status = launch(path(), "launch", "--nproc", "3", "--", "sh", "-c",
                "case $RANK in 1) sleep 0.3; echo $$ > " + pidFile + "; exit 3;;"
                        + " 0) while [ ! -s " + pidFile + " ]; do sleep 0.01; done; p=$(cat " + pidFile + ");"
                        + " while kill -0 $p 2>/dev/null; do :; done; exit 5;;"
                        + " *) exec sleep 60;; esac");
        java.nio.file.Files.deleteIfExists(pidFile);
        assertEquals(3, status, out() + err());
        assertTrue(err().contains("rank 1 exited with status 3"), err());
        // No trace directory anywhere: the report ends with how to keep the ranks' dumps next time.
        assertTrue(err().contains("ringstar launch: the ranks kept no trace dumps; give --trace-dir DIR"), err());
        assertTrue(err().contains("ringstar report hang DIR"), err());
    }

    @Test
    void childrenThatIgnoreSigtermAreKilledWhenTheirRankIsStopped() throws Exception {
        // Rank 0 starts a child that ignores SIGTERM, then waits; rank 1 fails, so rank 0 is stopped.
        int status = launch(path(), "launch", "--nproc", "2", "--", "sh", "-c",
                "if [ \"$RANK\" = 0 ]; then (trap '' TERM; exec sleep 60) & echo \"child $!\"; exec sleep 60; fi;"
                        + " sleep 0.5; exit 3");
        assertEquals(3, status, out() + err());
        String line = out().lines().filter(l -> l.startsWith("[rank 0] child ")).findFirst().orElseThrow();
        long child = Long.parseLong(line.substring("[rank 0] child ".length()).trim());
        java.util.Optional<ProcessHandle> handle = ProcessHandle.of(child);
        if (handle.isPresent()) {
            handle.get().onExit().get(5, TimeUnit.SECONDS);
        }
        assertTrue(handle.map(h -> !h.isAlive()).orElse(true), "child " + child + " of rank 0 still runs");
    }

    @Test
    void aRankThatOutlivesMaxTimeIsStopped() {
        int status = launch(path(), "launch", "--nproc", "2", "--max-time", "1", "--", "sh", "-c",
                "if [ \"$RANK\" = 1 ]; then exec sleep 60; fi");
        assertEquals(1, status, out() + err());
        assertTrue(err().contains("ranks [1] still running after --max-time 1 s"), err());
    }

    @Test
    void aCommandThatCannotStartIsReported() {
        int status = launch(path(), "launch", "--nproc", "2", "--", "/nonexistent/ringstar-rank");
        assertEquals(1, status, out() + err());
        assertTrue(err().contains("could not start rank 0"), err());
    }

    @Test
    void thisJarsCommandsRunThisJavaAgain() {
        List<String> line = LaunchCommand.commandLine(List.of("bench", "--max-bytes", "1K"), " -Xmx512m  -Dx=y ");
        assertTrue(line.get(0).endsWith("/bin/java"), line.toString());
        assertEquals(List.of("-Xmx512m", "-Dx=y"), line.subList(1, 3), "RINGSTAR_JAVA_OPTS reach every rank");
        assertEquals(List.of("bench", "--max-bytes", "1K"), line.subList(line.size() - 3, line.size()));
        assertEquals(List.of("sh", "-c", "true"), LaunchCommand.commandLine(List.of("sh", "-c", "true"), "-Xmx1g"));
    }
}
