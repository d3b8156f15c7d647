package io.ringstar.transport.netty.system;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.ChildProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ranks on two hosts, as far as the network is concerned: two network namespaces joined by a veth
 * pair, {@code 10.77.x.1/24} in one and {@code 10.77.x.2/24} in the other, with nothing else (no
 * shared loopback). Each rank is a JVM started with {@code ip netns exec}, and finds its address
 * by the {@code bind} option given as a CIDR block, as an interface's name, or not at all (the
 * address that routes to the coordinator). Needs root and iproute2; skipped otherwise. A link cut
 * in the middle of a job is a case of the fault suite ({@code io.ringstar.bench.faults.FaultSuiteTest}).
 */
@Tag("slow")
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class NetworkNamespaceSystemTest {
    private static final Pattern OK = Pattern.compile("OK \\d+ \\S+ iterations=(\\d+) elements=(\\d+)");

    private final long pid = ProcessHandle.current().pid();
    /** Unique per run, so a concurrent run or a leftover of a killed one cannot collide. */
    private final String namespaceA = "ringstar-a-" + pid;
    private final String namespaceB = "ringstar-b-" + pid;
    private final String vethA = "rsa" + pid;
    private final String vethB = "rsb" + pid;
    private final int subnet = (int) (pid % 200) + 20;
    private final List<String> created = new ArrayList<>();
    private RankJob job;

    @Test
    void ranksInTwoNamespacesJoinedByAVethPairGetExactResults() {
        String why = createNetwork();
        if (why != null) {
            System.out.println("NetworkNamespaceSystemTest skipped: " + why);
        }
        Assumptions.assumeTrue(why == null, why);

        String hostA = "10.77." + subnet + ".1";
        String hostB = "10.77." + subnet + ".2";
        String block = "10.77." + subnet + ".0/24";
        int worldSize = 4;
        int iterations = 10;
        // Any port is free in a namespace that was just made.
        String coordinators = hostA + ":29501," + hostA + ":29502";
        List<String> inA = List.of("ip", "netns", "exec", namespaceA);
        List<String> inB = List.of("ip", "netns", "exec", namespaceB);
        RankJob.Args common = new RankJob.Args()
                .set("world-size", worldSize)
                .set("algorithms", "ring,ps")
                .set("coordinators", coordinators)
                .set("iterations", iterations)
                .set("counts", "0,1,1009,1001,65537")
                .set("timeout-ms", 60_000)
                .set("secret", "namespaces-" + pid)
                .set("job", "netns");
        job = new RankJob("namespaces");
        job.start(common.copy().set("rank", 0).set("bind", block).prefix(inA));
        job.start(common.copy().set("rank", 1).set("bind", vethB).prefix(inB));
        job.start(common.copy().set("rank", 2).set("bind", block).prefix(inB));
        job.start(common.copy().set("rank", 3).prefix(inA));
        job.go();

        String[] expectedHost = {hostA, hostB, hostB, hostA};
        long elementsPerCall = 0 + 1 + 1009 + 1001 + 65537 + 1 + 21;
        for (int rank = 0; rank < worldSize; rank++) {
            ChildProcess child = job.rank(rank);
            child.awaitPrefix("DONE " + rank, Duration.ofSeconds(90));
            assertEquals(RankProcess.EXIT_OK, child.awaitExit(Duration.ofSeconds(30)), child.transcript());
            String prefix = "LISTENING " + rank + " ";
            List<String> listening = child.lines(line -> line.startsWith(prefix));
            assertEquals(2, listening.size(), child.transcript());
            for (String line : listening) {
                System.out.println("namespaces: " + line);
                assertTrue(line.contains("listening=/" + expectedHost[rank] + ":"), "rank " + rank
                        + " should listen on " + expectedHost[rank] + ": " + line);
            }
            for (String algorithm : List.of("ring", "ps")) {
                Matcher ok = OK.matcher(child.awaitPrefix("OK " + rank + " " + algorithm + " ", Duration.ZERO).text());
                assertTrue(ok.matches(), child.transcript());
                assertEquals(iterations, Integer.parseInt(ok.group(1)));
                assertEquals((iterations + 1) * elementsPerCall, Long.parseLong(ok.group(2)),
                        "elements checked by rank " + rank + " in " + algorithm);
            }
        }
    }

    @AfterEach
    void removeEverything() {
        try {
            if (job != null) {
                job.close();
            }
        } finally {
            deleteNetwork();
        }
    }

    /** Creates the namespaces and the veth pair; returns why it could not, or null. */
    private String createNetwork() {
        String version = tryRun(List.of("ip", "-V"));
        if (version != null) {
            return "iproute2's ip is not usable: " + version;
        }
        String failure = tryRun(List.of("ip", "netns", "add", namespaceA));
        if (failure != null) {
            return "cannot create a network namespace (root and CAP_SYS_ADMIN are needed): " + failure;
        }
        created.add(namespaceA);
        List<List<String>> steps = List.of(
                List.of("ip", "netns", "add", namespaceB),
                List.of("ip", "link", "add", vethA, "type", "veth", "peer", "name", vethB),
                List.of("ip", "link", "set", vethA, "netns", namespaceA),
                List.of("ip", "link", "set", vethB, "netns", namespaceB),
                List.of("ip", "-n", namespaceA, "addr", "add", "10.77." + subnet + ".1/24", "dev", vethA),
                List.of("ip", "-n", namespaceB, "addr", "add", "10.77." + subnet + ".2/24", "dev", vethB),
                List.of("ip", "-n", namespaceA, "link", "set", vethA, "up"),
                List.of("ip", "-n", namespaceB, "link", "set", vethB, "up"),
                List.of("ip", "-n", namespaceA, "link", "set", "lo", "up"),
                List.of("ip", "-n", namespaceB, "link", "set", "lo", "up"));
        for (List<String> step : steps) {
            failure = tryRun(step);
            if (failure != null) {
                return String.join(" ", step) + " failed: " + failure;
            }
            if (step.get(1).equals("netns") && step.get(2).equals("add")) {
                created.add(step.get(3));
            }
        }
        return null;
    }

    private void deleteNetwork() {
        // A veth still in this namespace (set-up failed half-way) goes with its own deletion;
        // one inside a namespace goes with the namespace.
        tryRun(List.of("ip", "link", "del", vethA));
        List<String> left = new ArrayList<>();
        for (String namespace : created) {
            String failure = tryRun(List.of("ip", "netns", "del", namespace));
            if (failure != null) {
                left.add(namespace + " (" + failure + ")");
            }
        }
        created.clear();
        if (!left.isEmpty()) {
            throw new IllegalStateException("could not delete network namespaces " + left);
        }
    }

    /** Runs a command; returns null if it succeeded, else its output or why it did not start. */
    private static String tryRun(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return "timed out";
            }
            return process.exitValue() == 0 ? null : "exit " + process.exitValue() + ": " + output;
        } catch (IOException e) {
            return e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
