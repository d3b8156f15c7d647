package io.ringstar.transport.netty.system;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.VethPair;
import java.time.Duration;
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
 * pair ({@link VethPair}), with nothing else (no shared loopback). Each rank is a JVM started with
 * {@code ip netns exec}, and finds its address by the {@code bind} option given as a CIDR block, as
 * an interface's name, or not at all (the address that routes to the coordinator). Needs root and
 * iproute2; skipped otherwise. A link cut in the middle of a job is a case of the fault suite
 * ({@code io.ringstar.bench.faults.FaultSuiteTest}).
 */
@Tag("slow")
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class NetworkNamespaceSystemTest {
    private static final Pattern OK = Pattern.compile("OK \\d+ \\S+ iterations=(\\d+) elements=(\\d+)");

    private VethPair network;
    private RankJob job;

    @Test
    void ranksInTwoNamespacesJoinedByAVethPairGetExactResults() {
        network = VethPair.create("netty");
        if (network.unavailable() != null) {
            System.out.println("NetworkNamespaceSystemTest skipped: " + network.unavailable());
        }
        Assumptions.assumeTrue(network.unavailable() == null, network.unavailable());

        String hostA = network.hostA();
        String hostB = network.hostB();
        String block = network.block();
        int worldSize = 4;
        int iterations = 10;
        // Any port is free in a namespace that was just made.
        String coordinators = hostA + ":29501," + hostA + ":29502";
        List<String> inA = network.inA();
        List<String> inB = network.inB();
        RankJob.Args common = new RankJob.Args()
                .set("world-size", worldSize)
                .set("algorithms", "ring,ps")
                .set("coordinators", coordinators)
                .set("iterations", iterations)
                .set("counts", "0,1,1009,1001,65537")
                .set("timeout-ms", 60_000)
                .set("secret", "namespaces-" + ProcessHandle.current().pid())
                .set("job", "netns");
        job = new RankJob("namespaces");
        job.start(common.copy().set("rank", 0).set("bind", block).prefix(inA));
        job.start(common.copy().set("rank", 1).set("bind", network.interfaceB()).prefix(inB));
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
            if (network != null) {
                network.close();
            }
        }
    }
}
