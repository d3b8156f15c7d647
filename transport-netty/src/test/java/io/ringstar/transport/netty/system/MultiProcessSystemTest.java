package io.ringstar.transport.netty.system;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.config.AggregatorOptions;
import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.Ports;
import io.ringstar.testing.RankMain;
import io.ringstar.transport.netty.NettyTransport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * The Netty transport between real processes on loopback: every rank a JVM of its own
 * ({@link RankMain}), results checked bit for bit against their closed form in each rank, with four
 * processes and an odd chunk size; and impostors that know the handshake's wire format on every
 * rank's listening port while a job runs. Three processes with exact results, killed and frozen
 * ranks, a late coordinator, impostor processes (wrong secret, a taken rank) and garbage that
 * does not know the handshake (random bytes, bad length fields, records cut short) are cases of
 * the fault suite in the bench module ({@code io.ringstar.bench.faults.FaultSuiteTest}), which runs
 * them over both network transports.
 */
@Tag("slow")
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class MultiProcessSystemTest {
    private static final Pattern LISTENING = Pattern.compile("LISTENING (\\d+) (\\d+) .*");
    private static final Pattern ITERATIONS = Pattern.compile("OK \\d+ iterations=(\\d+) elements=(\\d+)");

    private RankJob job;
    private final List<AutoCloseable> extras = new ArrayList<>();

    @BeforeEach
    void newJob(TestInfo test) {
        String method = test.getTestMethod().map(m -> m.getName()).orElse("test");
        String name = test.getDisplayName().startsWith(method) ? method
                : method + "-" + test.getDisplayName().replaceAll("[^A-Za-z0-9]+", "-");
        job = new RankJob(name);
    }

    @AfterEach
    void killEverything() throws Exception {
        for (AutoCloseable extra : extras) {
            extra.close();
        }
        job.close();
    }

    // ---------------------------------------------------------------- exact results

    /**
     * Both algorithms over one group of four processes (an even world size; the fault suite runs
     * three), with vectors of 0, 1, 7, 1001 and 1009 elements (prime, and not divisible by 4) and
     * one of 65537 (its ring segments exceed the 64 KiB under which the transport copies), FLOAT and
     * DOUBLE in turn, and a chunk size of an odd 10001 bytes, so every vector crosses many chunks.
     * Every rank checks every element of every reduction and of every fourth broadcast.
     */
    @Test
    void bothAlgorithmsAreExactAcrossFourProcesses() {
        int worldSize = 4;
        int iterations = 12;
        int broadcastEvery = 4;
        int[] counts = {0, 1, 1009, 1001, 65537, 7};
        RankJob.Args common = new RankJob.Args()
                .set("transport", NettyTransport.NAME)
                .set("world-size", worldSize)
                .set("algorithms", "ring,ps")
                .set("coordinator", "127.0.0.1:" + freePorts(1)[0])
                .set("iterations", iterations)
                .set("broadcast-every", broadcastEvery)
                .set("counts", "0,1,1009,1001,65537,7")
                .set("timeout-ms", 60_000)
                .set("job", "exact" + worldSize)
                .set("option." + AggregatorOptions.CHUNK_BYTES_OPTION, 10001);
        for (int rank = 0; rank < worldSize; rank++) {
            job.start(common.copy().set("rank", rank));
        }
        job.go();
        long elements = RankMain.expectedElements(counts, iterations, 2, broadcastEvery);
        for (int rank = 0; rank < worldSize; rank++) {
            ChildProcess child = job.rank(rank);
            Matcher ok = ITERATIONS.matcher(child.awaitPrefix("OK " + rank + " ", Duration.ofSeconds(90)).text());
            assertEquals(RankMain.EXIT_OK, child.awaitExit(Duration.ofSeconds(30)), child.transcript());
            assertTrue(ok.matches(), child.transcript());
            assertEquals(iterations, Integer.parseInt(ok.group(1)), "iterations on rank " + rank);
            assertEquals(elements, Long.parseLong(ok.group(2)), "elements checked by rank " + rank);
        }
    }

    // ---------------------------------------------------------------- garbage and impostors

    /**
     * While a job of three ranks runs (with a secret that each rank takes from another source:
     * option, file, environment), every rank's listening port gets a frame header where a
     * handshake was due, silent and half-closed connections, a burst of connections, and handshakes
     * that lie: a hello with a random proof, with no secret, with another protocol version; and,
     * past a hello with the right secret (whose answering proof is checked here too), an identity of
     * another job, aimed at another rank, with a forged tag, or claiming a rank that is taken. Each
     * is refused or closed; the job finishes with exact results and exit 0 everywhere. (Garbage
     * that does not know the handshake, and whole processes that try to join, are the fault
     * suite's.)
     */
    @Test
    void garbageAndImpostorsDoNotDisturbARunningJob() throws Exception {
        int worldSize = 3;
        int minimumIterations = 300;
        String secret = "system-test-secret-" + ProcessHandle.current().pid();
        int coordinatorPort = freePorts(1)[0];
        String jobId = "garbage";
        RankJob.Args common = new RankJob.Args()
                .set("transport", NettyTransport.NAME)
                .set("world-size", worldSize)
                .set("algorithms", "ring")
                .set("coordinator", "127.0.0.1:" + coordinatorPort)
                .set("iterations", minimumIterations)
                .set("until-stop", true)
                .set("counts", "0,1,1009,1001,70001")
                .set("timeout-ms", 60_000)
                .set("job", jobId);
        job.start(common.copy().set("rank", 0).set("option." + NettyTransport.SECRET_OPTION, secret));
        job.start(common.copy().set("rank", 1).set("option." + NettyTransport.SECRET_FILE_OPTION,
                RankJob.tempFile("ringstar-secret", "\n  " + secret + "  \n")));
        job.start(common.copy().set("rank", 2).env(NettyTransport.SECRET_ENV, secret));
        job.go();

        int[] ports = new int[worldSize];
        for (int rank = 0; rank < worldSize; rank++) {
            Matcher listening = LISTENING.matcher(job.rank(rank).awaitPrefix("LISTENING " + rank + " ",
                    RankJob.STARTUP).text());
            assertTrue(listening.matches());
            ports[rank] = Integer.parseInt(listening.group(2));
            job.rank(rank).awaitPrefix("ITER " + rank + " 0", Duration.ofSeconds(30));
        }
        assertEquals(coordinatorPort, ports[0]);

        String wholeJobId = jobId;
        byte[] secretBytes = secret.getBytes(StandardCharsets.UTF_8);
        ExecutorService pool = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "intruder");
            thread.setDaemon(true);
            return thread;
        });
        extras.add(pool::shutdownNow);
        Map<String, Future<String>> probes = new LinkedHashMap<>();
        for (int rank = 0; rank < worldSize; rank++) {
            int port = ports[rank];
            int target = rank;
            String at = "rank " + rank + " (port " + port + "): ";
            probes.put(at + "frame header, huge", pool.submit(() -> closesAfter(port,
                    Intruder.frameHeader(0x7FFFFFF0), "sent a frame header claiming 2 GiB")));
            probes.put(at + "frame header, small", pool.submit(() -> closesAfter(port, Intruder.frameHeader(8),
                    "sent a frame header before any handshake")));
            probes.put(at + "silent", pool.submit(() -> closesAfter(port, new byte[0], "sent nothing")));
            probes.put(at + "half-closed", pool.submit(() -> halfClosed(port)));
            probes.put(at + "burst", pool.submit(() -> burst(port, 40)));
            probes.put(at + "hello, random proof", pool.submit(() -> intrude(port, Intruder.VERSION, true, null, null,
                    "authentication failed")));
            probes.put(at + "hello, no secret", pool.submit(() -> intrude(port, Intruder.VERSION, false, null, null,
                    "requires a shared secret")));
            probes.put(at + "hello, version 9", pool.submit(() -> intrude(port, (short) 9, true, secretBytes, null,
                    "protocol version 9")));
            // Peers that know the secret but lie about who they are, or whose identity was altered.
            probes.put(at + "identify, other job", pool.submit(() -> intrude(port, Intruder.VERSION, true, secretBytes,
                    new Claim(false, Intruder.PURPOSE_PEER, "another-job", worldSize, (target + 1) % worldSize, target),
                    "job 'another-job'")));
            probes.put(at + "identify, other target", pool.submit(() -> intrude(port, Intruder.VERSION, true,
                    secretBytes, new Claim(false, Intruder.PURPOSE_PEER, wholeJobId, worldSize, 2, target == 0 ? 1 : 0),
                    target == 2 ? "not another rank" : "meant to reach rank")));
            probes.put(at + "identify, forged tag", pool.submit(() -> intrude(port, Intruder.VERSION, true, secretBytes,
                    new Claim(true, Intruder.PURPOSE_REGISTER, wholeJobId, worldSize, 1, target), null)));
            String taken = target == 0 ? "already taken" : target == 1 ? "already connected" : "not another rank";
            int claimed = target == 0 ? 1 : target == 1 ? 2 : 3;
            byte purpose = target == 0 ? Intruder.PURPOSE_REGISTER : Intruder.PURPOSE_PEER;
            probes.put(at + "identify, taken rank", pool.submit(() -> intrude(port, Intruder.VERSION, true, secretBytes,
                    new Claim(false, purpose, wholeJobId, worldSize, claimed, target), taken)));
        }

        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Future<String>> probe : probes.entrySet()) {
            try {
                String outcome = probe.getValue().get(60, TimeUnit.SECONDS);
                System.out.println("garbage: " + probe.getKey() + ": " + outcome);
            } catch (ExecutionException e) {
                problems.add(probe.getKey() + ": " + e.getCause());
            }
        }
        assertEquals(List.of(), problems, "probes that did not end as they should");

        for (int rank = 0; rank < worldSize; rank++) {
            ChildProcess child = job.rank(rank);
            assertTrue(child.isAlive() && child.find(line -> line.startsWith("FAIL ")).isEmpty(),
                    "rank " + rank + " was disturbed:\n" + child.transcript());
        }
        job.rank(0).send("STOP");
        for (int rank = 0; rank < worldSize; rank++) {
            ChildProcess child = job.rank(rank);
            Matcher ok = ITERATIONS.matcher(child.awaitPrefix("OK " + rank + " ", Duration.ofSeconds(60)).text());
            assertEquals(RankMain.EXIT_OK, child.awaitExit(Duration.ofSeconds(30)), child.transcript());
            assertTrue(ok.matches(), child.transcript());
            int iterations = Integer.parseInt(ok.group(1));
            assertTrue(iterations >= minimumIterations, "rank " + rank + " ran " + iterations + " iterations");
            System.out.printf("garbage: rank %d ran %d exact iterations meanwhile and logged %d refusals%n", rank,
                    iterations, child.count(line -> line.contains("refused a connection")));
            // Each rank saw the garbage, and said so in its log.
            assertTrue(child.count(line -> line.contains("authentication failed (wrong secret)")) >= 1,
                    child.transcript());
            assertTrue(child.count(line -> line.contains("refused a connection")) >= 10, child.transcript());
        }
    }

    // ---------------------------------------------------------------- helpers

    /** {@code count} ports, distinct, that were free on loopback a moment ago. */
    private static int[] freePorts(int count) {
        return Ports.freeLoopbackPorts(count);
    }

    /** Sends {@code bytes} and expects the rank to close the connection (at most its 5 s handshake limit). */
    private static String closesAfter(int port, byte[] bytes, String what) throws IOException {
        try (Socket socket = Intruder.connect(port, Duration.ofSeconds(25))) {
            Intruder.writeQuietly(socket, bytes);
            return "closed after " + Intruder.awaitClosedByRank(socket, what).toMillis() + " ms";
        }
    }

    private static String halfClosed(int port) throws IOException {
        try (Socket socket = Intruder.connect(port, Duration.ofSeconds(25))) {
            socket.shutdownOutput();
            return "closed after " + Intruder.awaitClosedByRank(socket, "half-closed its side").toMillis() + " ms";
        }
    }

    private static String burst(int port, int count) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(Intruder.connect(port, Duration.ofSeconds(5)));
            }
        } finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
        return count + " connections opened and closed";
    }

    /** What an intruder that got past the hello says it is. */
    private record Claim(boolean forgeTag, byte purpose, String jobId, int worldSize, int rank, int targetRank) {
    }

    /**
     * Plays the initiator's side of a handshake: a hello, then (with a claim) the rank's proof is
     * checked and the claim sent. Expects a refusal whose reason contains {@code expected}, or with
     * {@code expected} null, that the rank closes the connection without a word.
     */
    private static String intrude(int port, short version, boolean claimSecret, byte[] secret, Claim claim,
            String expected) throws IOException {
        try (Socket socket = Intruder.connect(port, Duration.ofSeconds(25))) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] challengeNonce = Intruder.readChallenge(in);
            byte[] helloNonce = Intruder.randomBytes(System.nanoTime(), Intruder.NONCE_BYTES);
            out.write(Intruder.hello(challengeNonce, helloNonce, version, claimSecret, secret));
            out.flush();
            if (claim != null) {
                Intruder.readProof(in, secret, challengeNonce, helloNonce);
                out.write(Intruder.identify(secret, challengeNonce, helloNonce, claim.forgeTag(), claim.purpose(),
                        claim.jobId(), claim.worldSize(), claim.rank(), claim.targetRank()));
                out.flush();
            }
            if (expected == null) {
                int next = in.read();
                if (next >= 0) {
                    throw new AssertionError("the rank answered (a record starting with byte " + next + ") where it"
                            + " should have closed the connection");
                }
                return "closed without an answer";
            }
            String reason = Intruder.readRefusal(in);
            if (!reason.contains(expected)) {
                throw new AssertionError("refused for '" + reason + "', expected a reason with '" + expected + "'");
            }
            Intruder.awaitClosedByRank(socket, "was refused");
            return "refused: " + reason;
        }
    }
}
