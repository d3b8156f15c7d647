package io.ringstar.transport.aeron.system;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.Ports;
import io.ringstar.transport.aeron.SharedMediaDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Aeron transport between real processes: three rank JVMs ({@link AeronRankProcess}) checking
 * every result element against its closed form, over UDP with an embedded driver each and over IPC
 * through one external driver ({@link SharedMediaDriver}, itself a JVM of its own), and a rank
 * killed with SIGKILL in the middle of a job.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AeronMultiProcessTest {
    private static final int WORLD_SIZE = 3;
    private static final Duration STARTUP = Duration.ofSeconds(90);
    private final List<Jvm> jvms = new ArrayList<>();

    @AfterEach
    void killEverything() {
        jvms.forEach(Jvm::close);
    }

    private Jvm start(String name, Class<?> main, List<String> args) {
        Jvm jvm = Jvm.start(name, main, args);
        jvms.add(jvm);
        return jvm;
    }

    private List<Jvm> startRanks(String test, String algorithms, int iterations, String counts, List<String> extra) {
        int[] ports = Ports.freeLoopbackPorts(2);
        String coordinators = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
        List<Jvm> ranks = new ArrayList<>();
        // Started in reverse order: the later ranks must wait for rank 0 to come up.
        for (int rank = WORLD_SIZE - 1; rank >= 0; rank--) {
            List<String> args = new ArrayList<>(List.of("--rank", Integer.toString(rank),
                    "--world-size", Integer.toString(WORLD_SIZE), "--algorithms", algorithms,
                    "--coordinators", coordinators, "--iterations", Integer.toString(iterations), "--counts", counts,
                    "--timeout-ms", "60000", "--job", test, "--option.aeron.termLength", Integer.toString(256 << 10)));
            args.addAll(extra);
            ranks.add(0, start(test + "-rank" + rank, AeronRankProcess.class, args));
        }
        return ranks;
    }

    private static void assertExact(List<Jvm> ranks, int iterations) {
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            Jvm jvm = ranks.get(rank);
            jvm.await("DONE " + rank, STARTUP);
            assertEquals(AeronRankProcess.EXIT_OK, jvm.awaitExit(Duration.ofSeconds(30)), jvm.transcript());
            for (String algorithm : List.of("ring", "ps")) {
                String ok = jvm.await("OK " + rank + " " + algorithm + " ", Duration.ZERO);
                assertTrue(ok.startsWith("OK " + rank + " " + algorithm + " iterations=" + iterations + " elements="), ok);
                assertTrue(Long.parseLong(ok.substring(ok.indexOf("elements=") + 9)) > 0, ok);
            }
        }
    }

    /** Both algorithms over UDP, each JVM with its own embedded driver; no pair uses IPC. */
    @Test
    void bothAlgorithmsAreExactOverUdpWithEmbeddedDrivers() {
        int iterations = 20;
        List<Jvm> ranks = startRanks("udp", "ring,ps", iterations, "0,1,1009,65537,7", List.of());
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            assertEquals("IPC " + rank + " []", ranks.get(rank).await("IPC " + rank + " ", STARTUP), "rank " + rank
                    + " talks UDP to every peer");
        }
        assertExact(ranks, iterations);
    }

    /**
     * Both algorithms over IPC through one external driver in a JVM of its own, which every rank
     * names by its directory; stopping the driver with SIGTERM removes its directory.
     */
    @Test
    void bothAlgorithmsAreExactOverIpcWithOneSharedDriver() throws Exception {
        Path dir = Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir"),
                "ringstar-test-shared-" + ProcessHandle.current().pid());
        Jvm driver = start("ipc-driver", SharedMediaDriver.class, List.of("--dir", dir.toString(), "--term-length",
                Integer.toString(256 << 10)));
        driver.await("media driver ready in ", STARTUP);
        int iterations = 20;
        List<Jvm> ranks = startRanks("ipc", "ring,ps", iterations, "0,1,1009,65537,7",
                List.of("--option.aeron.dir", dir.toString()));
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            List<Integer> others = new ArrayList<>();
            for (int peer = 0; peer < WORLD_SIZE; peer++) {
                if (peer != rank) {
                    others.add(peer);
                }
            }
            assertEquals("IPC " + rank + " " + others, ranks.get(rank).await("IPC " + rank + " ", STARTUP),
                    "rank " + rank + " talks IPC to every peer");
        }
        assertExact(ranks, iterations);
        assertTrue(Files.isDirectory(dir), "the shared driver's directory exists while it runs");
        driver.terminate();
        driver.awaitExit(Duration.ofSeconds(30));
        assertFalse(Files.exists(dir), "the shared driver removed " + dir + " when it stopped");
    }

    /**
     * A rank killed with SIGKILL in the middle of a long ring loop: its image goes away, and the
     * survivors fail with {@code PeerFailureException} naming it well inside the 60 s timeout
     * (the liveness timeout is 2 s here). Over UDP with embedded drivers, and over IPC through a
     * shared driver, which notices the dead client by its own liveness timeout.
     */
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"udp", "ipc"})
    void aKilledRankFailsTheOthersPromptly(String medium) throws Exception {
        List<String> extra = new ArrayList<>(List.of("--option.aeron.livenessTimeoutMs", "2000"));
        Path dir = Path.of(Files.isDirectory(Path.of("/dev/shm")) ? "/dev/shm" : System.getProperty("java.io.tmpdir"),
                "ringstar-test-kill-" + ProcessHandle.current().pid());
        Jvm driver = null;
        if (medium.equals("ipc")) {
            driver = start("kill-driver", SharedMediaDriver.class, List.of("--dir", dir.toString(),
                    "--term-length", Integer.toString(256 << 10), "--liveness-ms", "2000"));
            driver.await("media driver ready in ", STARTUP);
            extra.addAll(List.of("--option.aeron.dir", dir.toString()));
        }
        List<Jvm> ranks = startRanks("kill-" + medium, "ring", 1_000_000, "1009,65537", extra);
        int victim = 1;
        ranks.get(victim).await("ITER " + victim + " ring 100", STARTUP);
        long killedAt = System.nanoTime();
        ranks.get(victim).kill();
        for (int rank : new int[] {0, 2}) {
            String failure = ranks.get(rank).await("FAIL " + rank + " ", Duration.ofSeconds(45));
            Duration detection = Duration.ofNanos(System.nanoTime() - killedAt);
            System.out.printf("kill over %s: rank %d reported after %d ms: %s%n", medium, rank, detection.toMillis(),
                    failure);
            assertTrue(failure.startsWith("FAIL " + rank + " PeerFailureException "), ranks.get(rank).transcript());
            assertTrue(failure.contains("rank " + victim), "names the killed rank: " + failure);
            assertTrue(detection.compareTo(Duration.ofSeconds(15)) < 0, "took " + detection);
            assertEquals(AeronRankProcess.EXIT_PEER_FAILURE, ranks.get(rank).awaitExit(Duration.ofSeconds(30)));
        }
        if (driver != null) {
            driver.terminate();
            driver.awaitExit(Duration.ofSeconds(30));
            assertFalse(Files.exists(dir), "the shared driver removed " + dir + " when it stopped");
        }
    }
}
