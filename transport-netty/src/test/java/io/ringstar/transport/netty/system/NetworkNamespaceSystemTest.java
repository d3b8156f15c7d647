package io.ringstar.transport.netty.system;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.RankMain;
import io.ringstar.testing.VethPair;
import io.ringstar.transport.netty.NettyTransport;
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
 * iproute2; skipped otherwise. The namespaces share {@code /dev/shm}: the two ranks in one namespace
 * (one address) talk through shared memory, the pairs across the veth over TCP. A link cut in the
 * middle of a job is a case of the fault suite ({@code io.ringstar.bench.faults.FaultSuiteTest}).
 */
@Tag("slow")
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class NetworkNamespaceSystemTest {
    private static final Pattern OK = Pattern.compile("OK \\d+ iterations=(\\d+) elements=(\\d+)");

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
        int broadcastEvery = 5;
        int[] counts = {0, 1, 1009, 1001, 65537};
        List<String> inA = network.inA();
        List<String> inB = network.inB();
        String bind = "option." + NettyTransport.BIND_OPTION;
        RankJob.Args common = new RankJob.Args()
                .set("transport", NettyTransport.NAME)
                .set("world-size", worldSize)
                .set("algorithms", "ring,ps")
                // Any port is free in a namespace that was just made.
                .set("coordinator", hostA + ":29501")
                .set("iterations", iterations)
                .set("broadcast-every", broadcastEvery)
                .set("counts", "0,1,1009,1001,65537")
                .set("timeout-ms", 60_000)
                .set("option." + NettyTransport.SECRET_OPTION, "namespaces-" + ProcessHandle.current().pid())
                .set("job", "netns");
        job = new RankJob("namespaces");
        job.start(common.copy().set("rank", 0).set(bind, block).prefix(inA));
        job.start(common.copy().set("rank", 1).set(bind, network.interfaceB()).prefix(inB));
        job.start(common.copy().set("rank", 2).set(bind, block).prefix(inB));
        job.start(common.copy().set("rank", 3).prefix(inA));
        job.go();

        String[] expectedHost = {hostA, hostB, hostB, hostA};
        long elements = RankMain.expectedElements(counts, iterations, 2, broadcastEvery);
        for (int rank = 0; rank < worldSize; rank++) {
            ChildProcess child = job.rank(rank);
            Matcher ok = OK.matcher(child.awaitPrefix("OK " + rank + " ", Duration.ofSeconds(90)).text());
            assertEquals(RankMain.EXIT_OK, child.awaitExit(Duration.ofSeconds(30)), child.transcript());
            String prefix = "LISTENING " + rank + " ";
            List<String> listening = child.lines(line -> line.startsWith(prefix));
            assertEquals(1, listening.size(), child.transcript());
            System.out.println("namespaces: " + listening.get(0));
            assertTrue(listening.get(0).contains("listening=/" + expectedHost[rank] + ":"), "rank " + rank
                    + " should listen on " + expectedHost[rank] + ": " + listening.get(0));
            // A pair in one namespace (one address) shares memory; pairs across the veth talk TCP.
            String[] sharedWith = {"[3]", "[2]", "[1]", "[0]"};
            String formedPrefix = "FORMED " + rank + " ";
            String formed = child.lines(line -> line.startsWith(formedPrefix)).get(0);
            assertTrue(formed.endsWith(" shm=" + sharedWith[rank]), "rank " + rank + ": " + formed);
            assertTrue(ok.matches(), child.transcript());
            assertEquals(iterations, Integer.parseInt(ok.group(1)));
            assertEquals(elements, Long.parseLong(ok.group(2)), "elements checked by rank " + rank);
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
