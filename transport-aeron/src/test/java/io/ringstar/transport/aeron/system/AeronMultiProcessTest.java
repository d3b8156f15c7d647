package io.ringstar.transport.aeron.system;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.Ports;
import io.ringstar.testing.RankMain;
import io.ringstar.transport.aeron.AeronGroups;
import io.ringstar.transport.aeron.AeronTransport;
import io.ringstar.transport.aeron.SharedMediaDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Aeron transport between real processes over IPC: three rank JVMs ({@link RankMain}) checking
 * every result element against its closed form through one external driver
 * ({@link SharedMediaDriver}, itself a JVM of its own), and a rank killed with SIGKILL in the
 * middle of a job. Exact results and faults over UDP, an embedded driver per process, are the fault
 * suite's ({@code io.ringstar.bench.faults.FaultSuiteTest}).
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AeronMultiProcessTest {
    private static final int WORLD_SIZE = 3;
    private static final Duration STARTUP = Duration.ofSeconds(90);
    private static final int BROADCAST_EVERY = 5;
    private final List<ChildProcess> children = new ArrayList<>();

    /** Kills whatever still runs, so a test that fails half-way leaves no JVM behind, and keeps every transcript. */
    @AfterEach
    void killEverything() {
        RuntimeException failure = null;
        for (ChildProcess child : children) {
            try {
                child.kill();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
            child.save(ChildProcess.logDirectory().resolve(child.name() + ".log"));
        }
        if (failure != null) {
            throw failure;
        }
    }

    private ChildProcess start(String name, Class<?> main, List<String> args) {
        List<String> command = new ArrayList<>(ChildProcess.javaCommand(main));
        command.addAll(args);
        ChildProcess child = ChildProcess.start(name, command, Map.of("OMP_NUM_THREADS", "1"));
        children.add(child);
        return child;
    }

    /**
     * Starts the ranks of one job ({@link RankMain}, settings as arguments), waits until each has
     * warmed up, then tells them to run in reverse order: the later ranks must wait for rank 0.
     */
    private List<ChildProcess> startRanks(String test, String algorithms, int iterations, String counts,
            List<String> extra) {
        String coordinator = "127.0.0.1:" + Ports.freeLoopbackPort();
        List<ChildProcess> ranks = new ArrayList<>();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            List<String> args = new ArrayList<>(List.of("name=" + test + "-rank" + rank,
                    "transport=" + AeronTransport.NAME, "rank=" + rank, "world-size=" + WORLD_SIZE,
                    "algorithms=" + algorithms,
                    "coordinator=" + coordinator, "iterations=" + iterations, "counts=" + counts,
                    "timeout-ms=60000", "job=" + test, "report-every=20", "broadcast-every=" + BROADCAST_EVERY,
                    "option.aeron.termLength=" + AeronGroups.TEST_TERM_LENGTH));
            args.addAll(extra);
            ranks.add(start(test + "-rank" + rank, RankMain.class, args));
        }
        for (ChildProcess rank : ranks) {
            rank.awaitPrefix("READY ", STARTUP);
        }
        for (int rank = WORLD_SIZE - 1; rank >= 0; rank--) {
            ranks.get(rank).send("RUN");
        }
        return ranks;
    }

    private static void assertExact(List<ChildProcess> ranks, int iterations, int[] counts) {
        long elements = RankMain.expectedElements(counts, iterations, 2, BROADCAST_EVERY);
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ChildProcess child = ranks.get(rank);
            String ok = child.awaitPrefix("OK " + rank + " ", STARTUP).text();
            assertEquals(RankMain.EXIT_OK, child.awaitExit(Duration.ofSeconds(30)), child.transcript());
            assertEquals("OK " + rank + " iterations=" + iterations + " elements=" + elements, ok, child.transcript());
        }
    }

    /**
     * Both algorithms over IPC through one external driver in a JVM of its own, which every rank
     * names by its directory; stopping the driver with SIGTERM removes its directory.
     */
    @Test
    void bothAlgorithmsAreExactOverIpcWithOneSharedDriver() throws Exception {
        Path dir = AeronGroups.driverDirectory("ringstar-test-shared");
        ChildProcess driver = start("ipc-driver", SharedMediaDriver.class, List.of("--dir", dir.toString(),
                "--term-length", Integer.toString(AeronGroups.TEST_TERM_LENGTH)));
        driver.awaitPrefix("media driver ready in ", STARTUP);
        int iterations = 20;
        List<ChildProcess> ranks = startRanks("ipc", "ring,ps", iterations, "0,1,1009,65537,7",
                List.of("option.aeron.dir=" + dir));
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            List<Integer> others = new ArrayList<>();
            for (int peer = 0; peer < WORLD_SIZE; peer++) {
                if (peer != rank) {
                    others.add(peer);
                }
            }
            assertEquals("IPC " + rank + " " + others, ranks.get(rank).awaitPrefix("IPC " + rank + " ", STARTUP).text(),
                    "rank " + rank + " talks IPC to every peer");
        }
        assertExact(ranks, iterations, new int[] {0, 1, 1009, 65537, 7});
        assertTrue(Files.isDirectory(dir), "the shared driver's directory exists while it runs");
        driver.terminate();
        driver.awaitExit(Duration.ofSeconds(30));
        assertFalse(Files.exists(dir), "the shared driver removed " + dir + " when it stopped");
    }

    /**
     * A rank killed with SIGKILL in the middle of a long ring loop, over IPC through a shared
     * driver, which outlives it: the survivors learn of the death from the sentinel connections
     * (or, failing those, the driver's liveness timeout of 2 s here) and fail with
     * {@code PeerFailureException} naming it well inside the 60 s timeout. Over UDP with embedded
     * drivers this is a case of the fault suite
     * ({@code io.ringstar.bench.faults.FaultSuiteTest}), before, during and after each algorithm.
     */
    @Test
    void aKilledRankFailsTheOthersPromptlyOverIpc() throws Exception {
        String medium = "ipc";
        List<String> extra = new ArrayList<>(List.of("option.aeron.livenessTimeoutMs=2000"));
        Path dir = AeronGroups.driverDirectory("ringstar-test-kill");
        ChildProcess driver = start("kill-driver", SharedMediaDriver.class, List.of("--dir", dir.toString(),
                "--term-length", Integer.toString(AeronGroups.TEST_TERM_LENGTH), "--liveness-ms", "2000"));
        driver.awaitPrefix("media driver ready in ", STARTUP);
        extra.add("option.aeron.dir=" + dir);
        List<ChildProcess> ranks = startRanks("kill-" + medium, "ring", 1_000_000, "1009,65537", extra);
        int victim = 1;
        ranks.get(victim).awaitPrefix("ITER " + victim + " 100", STARTUP);
        long killedAt = System.nanoTime();
        ranks.get(victim).killAbruptly();
        int[] survivors = {0, 2};
        // Every survivor's FAIL line first, each timed by when it arrived, and only then the exits: waiting
        // for one survivor's exit must not count towards the next one's detection time.
        for (int rank : survivors) {
            ChildProcess.Line failure = ranks.get(rank).awaitPrefix("FAIL rank=" + rank + " ", Duration.ofSeconds(45));
            Duration detection = Duration.ofNanos(failure.nanos() - killedAt);
            System.out.printf("kill over %s: rank %d reported after %d ms: %s%n", medium, rank, detection.toMillis(),
                    failure.text());
            assertTrue(failure.text().contains(" PeerFailureException "), ranks.get(rank).transcript());
            assertTrue(Pattern.compile("rank " + victim + "\\b").matcher(failure.text()).find(),
                    "names the killed rank: " + failure.text());
            assertTrue(detection.compareTo(Duration.ofSeconds(15)) < 0, "took " + detection);
        }
        for (int rank : survivors) {
            assertEquals(RankMain.EXIT_PEER_FAILURE, ranks.get(rank).awaitExit(Duration.ofSeconds(30)),
                    ranks.get(rank).transcript());
        }
        driver.terminate();
        driver.awaitExit(Duration.ofSeconds(30));
        assertFalse(Files.exists(dir), "the shared driver removed " + dir + " when it stopped");
    }
}
