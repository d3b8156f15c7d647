package io.ringstar.transport.aeron.system;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.Ports;
import io.ringstar.transport.aeron.AeronGroups;
import io.ringstar.transport.aeron.SharedMediaDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Aeron transport between real processes: three rank JVMs ({@link AeronRankProcess}) checking
 * every result element against its closed form, over UDP with an embedded driver each and over IPC
 * through one external driver ({@link SharedMediaDriver}, itself a JVM of its own), and a rank
 * killed with SIGKILL in the middle of a job over IPC. Faults over UDP are the fault suite's
 * ({@code io.ringstar.bench.faults.FaultSuiteTest}).
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AeronMultiProcessTest {
    private static final int WORLD_SIZE = 3;
    private static final Duration STARTUP = Duration.ofSeconds(90);
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

    private List<ChildProcess> startRanks(String test, String algorithms, int iterations, String counts, List<String> extra) {
        int[] ports = Ports.freeLoopbackPorts(2);
        String coordinators = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
        List<ChildProcess> ranks = new ArrayList<>();
        // Started in reverse order: the later ranks must wait for rank 0 to come up.
        for (int rank = WORLD_SIZE - 1; rank >= 0; rank--) {
            List<String> args = new ArrayList<>(List.of("--rank", Integer.toString(rank),
                    "--world-size", Integer.toString(WORLD_SIZE), "--algorithms", algorithms,
                    "--coordinators", coordinators, "--iterations", Integer.toString(iterations), "--counts", counts,
                    "--timeout-ms", "60000", "--job", test, "--option.aeron.termLength",
                    Integer.toString(AeronGroups.TEST_TERM_LENGTH)));
            args.addAll(extra);
            ranks.add(0, start(test + "-rank" + rank, AeronRankProcess.class, args));
        }
        return ranks;
    }

    private static void assertExact(List<ChildProcess> ranks, int iterations) {
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ChildProcess child = ranks.get(rank);
            child.awaitPrefix("DONE " + rank, STARTUP);
            assertEquals(AeronRankProcess.EXIT_OK, child.awaitExit(Duration.ofSeconds(30)), child.transcript());
            for (String algorithm : List.of("ring", "ps")) {
                String ok = child.awaitPrefix("OK " + rank + " " + algorithm + " ", Duration.ZERO).text();
                assertTrue(ok.startsWith("OK " + rank + " " + algorithm + " iterations=" + iterations + " elements="), ok);
                assertTrue(Long.parseLong(ok.substring(ok.indexOf("elements=") + 9)) > 0, ok);
            }
        }
    }

    /** Both algorithms over UDP, each JVM with its own embedded driver; no pair uses IPC. */
    @Test
    void bothAlgorithmsAreExactOverUdpWithEmbeddedDrivers() {
        int iterations = 20;
        List<ChildProcess> ranks = startRanks("udp", "ring,ps", iterations, "0,1,1009,65537,7", List.of());
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            assertEquals("IPC " + rank + " []", ranks.get(rank).awaitPrefix("IPC " + rank + " ", STARTUP).text(),
                    "rank " + rank + " talks UDP to every peer");
        }
        assertExact(ranks, iterations);
    }

    /**
     * Both algorithms over IPC through one external driver in a JVM of its own, which every rank
     * names by its directory; stopping the driver with SIGTERM removes its directory.
     */
    @Test
    void bothAlgorithmsAreExactOverIpcWithOneSharedDriver() throws Exception {
        Path dir = AeronGroups.driverDirectory("ringstar-test-shared");
        ChildProcess driver = start("ipc-driver", SharedMediaDriver.class, List.of("--dir", dir.toString(), "--term-length",
                Integer.toString(AeronGroups.TEST_TERM_LENGTH)));
        driver.awaitPrefix("media driver ready in ", STARTUP);
        int iterations = 20;
        List<ChildProcess> ranks = startRanks("ipc", "ring,ps", iterations, "0,1,1009,65537,7",
                List.of("--option.aeron.dir", dir.toString()));
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
        assertExact(ranks, iterations);
        assertTrue(Files.isDirectory(dir), "the shared driver's directory exists while it runs");
        driver.terminate();
        driver.awaitExit(Duration.ofSeconds(30));
        assertFalse(Files.exists(dir), "the shared driver removed " + dir + " when it stopped");
    }

    /**
     * A rank killed with SIGKILL in the middle of a long ring loop, over IPC through a shared
     * driver, which outlives it: the survivors learn of the death from the sentinel connections
     * (or, failing those, the driver's liveness timeout of 2 s here) and fail with
     * {@code PeerFailureException} naming it well inside the 60 s timeout. Over UDP with embedded drivers this is a case of the fault suite
     * ({@code io.ringstar.bench.faults.FaultSuiteTest}), before, during and after each algorithm.
     */
    @Test
    void aKilledRankFailsTheOthersPromptlyOverIpc() throws Exception {
        String medium = "ipc";
        List<String> extra = new ArrayList<>(List.of("--option.aeron.livenessTimeoutMs", "2000"));
        Path dir = AeronGroups.driverDirectory("ringstar-test-kill");
        ChildProcess driver = start("kill-driver", SharedMediaDriver.class, List.of("--dir", dir.toString(),
                "--term-length", Integer.toString(AeronGroups.TEST_TERM_LENGTH), "--liveness-ms", "2000"));
        driver.awaitPrefix("media driver ready in ", STARTUP);
        extra.addAll(List.of("--option.aeron.dir", dir.toString()));
        List<ChildProcess> ranks = startRanks("kill-" + medium, "ring", 1_000_000, "1009,65537", extra);
        int victim = 1;
        ranks.get(victim).awaitPrefix("ITER " + victim + " ring 100", STARTUP);
        long killedAt = System.nanoTime();
        ranks.get(victim).killAbruptly();
        int[] survivors = {0, 2};
        // Every survivor's FAIL line first, each timed by when it arrived, and only then the exits: waiting
        // for one survivor's exit must not count towards the next one's detection time.
        for (int rank : survivors) {
            ChildProcess.Line failure = ranks.get(rank).awaitPrefix("FAIL " + rank + " ", Duration.ofSeconds(45));
            Duration detection = Duration.ofNanos(failure.nanos() - killedAt);
            System.out.printf("kill over %s: rank %d reported after %d ms: %s%n", medium, rank, detection.toMillis(),
                    failure.text());
            assertTrue(failure.text().startsWith("FAIL " + rank + " PeerFailureException "),
                    ranks.get(rank).transcript());
            assertTrue(failure.text().contains("rank " + victim), "names the killed rank: " + failure.text());
            assertTrue(detection.compareTo(Duration.ofSeconds(15)) < 0, "took " + detection);
        }
        for (int rank : survivors) {
            assertEquals(AeronRankProcess.EXIT_PEER_FAILURE, ranks.get(rank).awaitExit(Duration.ofSeconds(30)),
                    ranks.get(rank).transcript());
        }
        driver.terminate();
        driver.awaitExit(Duration.ofSeconds(30));
        assertFalse(Files.exists(dir), "the shared driver removed " + dir + " when it stopped");
    }
}
