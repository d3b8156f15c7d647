package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Transport;
import io.ringstar.config.NetworkOptions;
import io.ringstar.spi.HandshakeProofs;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.RefusedException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a network transport forms its group, written once: start order, lateness, and every
 * refusal of the shared handshake ({@link io.ringstar.spi.handshake}) as the ranks see it, plus
 * bytes from strangers on every port a rank listens on. A transport's test module extends this
 * class and supplies {@link #open} and the ports; every test here then runs over that transport.
 * Ranks run as threads of this JVM on loopback; every wait is bounded.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class NetworkTransportConformanceTest {
    /** The bound on each rank's group formation in tests that expect it to succeed. */
    protected static final Duration FORMING = Duration.ofSeconds(20);
    /** The bound in tests where a rank must give up. */
    protected static final Duration GIVING_UP = Duration.ofSeconds(2);
    /** How long after its timeout a rank that gives up may take to say so. */
    private static final Duration GRACE = Duration.ofSeconds(15);

    private final List<CompletableFuture<Transport>> opened = new ArrayList<>();

    /**
     * Opens rank {@code rank} of a group around {@code coordinator} ("127.0.0.1:port") with the
     * transport-neutral {@code options} ({@link NetworkOptions#JOB_ID_OPTION},
     * {@link NetworkOptions#SECRET_OPTION}); blocks until the group has formed or throws.
     */
    protected abstract Transport open(int worldSize, int rank, String coordinator, Duration timeout,
            Map<String, String> options);

    /** The TCP addresses a formed rank accepts connections on (none if it keeps no listener). */
    protected abstract List<InetSocketAddress> tcpListeners(Transport rank);

    /** The UDP addresses a formed rank receives on (none for a transport without UDP). */
    protected List<InetSocketAddress> udpListeners(Transport rank) {
        return List.of();
    }

    @AfterEach
    void closeEverything() {
        for (CompletableFuture<Transport> rank : opened) {
            rank.whenComplete((transport, error) -> {
                if (transport != null) {
                    transport.close();
                }
            });
        }
    }

    private CompletableFuture<Transport> start(int worldSize, int rank, String coordinator, Duration timeout,
            Map<String, String> options) {
        // A thread of its own per rank: a pool's few threads would start the ranks one after another.
        CompletableFuture<Transport> future = CompletableFuture.supplyAsync(
                () -> open(worldSize, rank, coordinator, timeout, options), task -> {
                    Thread thread = new Thread(task, "conformance-rank" + rank);
                    thread.setDaemon(true);
                    thread.start();
                });
        opened.add(future);
        return future;
    }

    private static String coordinator() {
        return "127.0.0.1:" + Ports.freeLoopbackPort();
    }

    private static int port(String coordinator) {
        return Integer.parseInt(coordinator.substring(coordinator.lastIndexOf(':') + 1));
    }

    private static Transport formed(CompletableFuture<Transport> rank) throws Exception {
        return rank.get(FORMING.plus(GRACE).toSeconds(), TimeUnit.SECONDS);
    }

    /** What rank's opening threw, waiting at most its timeout and the grace. */
    private static Throwable failureOf(CompletableFuture<Transport> rank) throws InterruptedException {
        try {
            Transport joined = rank.get(GIVING_UP.plus(GRACE).toSeconds(), TimeUnit.SECONDS);
            throw new AssertionError("rank " + joined.rank() + " formed a group it should not have");
        } catch (ExecutionException e) {
            return e.getCause() instanceof java.util.concurrent.CompletionException c ? c.getCause() : e.getCause();
        } catch (TimeoutException e) {
            throw new AssertionError("a rank neither formed nor gave up within its timeout and " + GRACE, e);
        }
    }

    /** Every rank sends distinct bytes to every other, which checks what it received. */
    private static void exchangeExactly(List<Transport> group) {
        int worldSize = group.size();
        Ranks.runAll(worldSize, FORMING, rank -> {
            Transport self = group.get(rank);
            for (int peer = 0; peer < worldSize; peer++) {
                if (peer != rank) {
                    self.send(peer, ByteBuffer.wrap(pattern(rank, peer)));
                }
            }
            for (int peer = 0; peer < worldSize; peer++) {
                if (peer != rank) {
                    ByteBuffer into = ByteBuffer.allocate(pattern(peer, rank).length);
                    self.recv(peer, into);
                    assertArrayEquals(pattern(peer, rank), into.array(), "from rank " + peer + " at rank " + rank);
                }
            }
            return null;
        });
    }

    private static byte[] pattern(int from, int to) {
        byte[] bytes = new byte[1000 + from * 10 + to];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (from * 31 + to * 7 + i);
        }
        return bytes;
    }

    private static Map<String, String> options(String... pairs) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            options.put(pairs[i], pairs[i + 1]);
        }
        return options;
    }

    // ---- start order and lateness ----

    @Test
    void ranksStartedInAnyOrderWithTheCoordinatorLastFormAGroup() throws Exception {
        String coordinator = coordinator();
        List<CompletableFuture<Transport>> ranks = new ArrayList<>(List.of(new CompletableFuture<>(),
                new CompletableFuture<>(), new CompletableFuture<>()));
        for (int rank : new int[] {2, 1, 0}) {
            ranks.set(rank, start(3, rank, coordinator, FORMING, Map.of()));
            Thread.sleep(200);
        }
        List<Transport> group = new ArrayList<>();
        for (CompletableFuture<Transport> rank : ranks) {
            group.add(formed(rank));
        }
        exchangeExactly(group);
    }

    @Test
    void aRankThatComesLateWithinTheTimeoutJoins() throws Exception {
        String coordinator = coordinator();
        CompletableFuture<Transport> zero = start(3, 0, coordinator, FORMING, Map.of());
        CompletableFuture<Transport> one = start(3, 1, coordinator, FORMING, Map.of());
        Thread.sleep(2000);
        assertTrue(!zero.isDone() && !one.isDone(), "a group of 3 formed with 2 ranks");
        CompletableFuture<Transport> two = start(3, 2, coordinator, FORMING, Map.of());
        exchangeExactly(List.of(formed(zero), formed(one), formed(two)));
    }

    @Test
    void aRankThatNeverComesIsNamedWhenTheOthersGiveUpInTime() throws Exception {
        String coordinator = coordinator();
        // Rank 0 must give up first: a rank that gives up leaves, and rank 0 then rightly names it
        // among the missing. With equal timeouts rank 1, started a moment before rank 0 waits,
        // sometimes gave up some tens of milliseconds first, and rank 0 named rank 1 (a third of the
        // runs of this test alone); so rank 1 waits longer.
        Duration patience = GIVING_UP;
        long start = System.nanoTime();
        CompletableFuture<Transport> zero = start(3, 0, coordinator, patience, Map.of());
        CompletableFuture<Transport> one = start(3, 1, coordinator, patience.multipliedBy(3), Map.of());
        CollectiveTimeoutException atZero = assertInstanceOf(CollectiveTimeoutException.class, failureOf(zero));
        assertEquals(0, atZero.rank());
        assertEquals(2, atZero.peerRank(), atZero.getMessage());
        // Rank 1 hears rank 0 give up, or gives up itself: either way it fails in time, naming itself.
        CollectiveException atOne = assertInstanceOf(CollectiveException.class, failureOf(one));
        assertEquals(1, atOne.rank());
        long elapsed = System.nanoTime() - start;
        assertTrue(elapsed >= patience.toNanos() && elapsed < patience.plus(GRACE).toNanos(),
                "gave up after " + elapsed / 1_000_000 + " ms");
    }

    // ---- refusals ----

    /**
     * Rank 0 with {@code zero}, rank 1 (of {@code oneWorldSize}) with {@code one}: rank 1 is refused,
     * rank 0 times out waiting for a rank it can admit; both say why.
     */
    private RefusedException refusedPair(Map<String, String> zero, int oneWorldSize, Map<String, String> one,
            String because) throws Exception {
        String coordinator = coordinator();
        CompletableFuture<Transport> rankZero = start(2, 0, coordinator, GIVING_UP, zero);
        CompletableFuture<Transport> rankOne = start(oneWorldSize, 1, coordinator, GIVING_UP, one);
        RefusedException refused = assertInstanceOf(RefusedException.class, failureOf(rankOne));
        assertEquals(1, refused.rank());
        assertEquals(0, refused.peerRank());
        assertTrue(refused.getMessage().contains(because), refused.getMessage());
        CollectiveTimeoutException atZero = assertInstanceOf(CollectiveTimeoutException.class, failureOf(rankZero));
        assertEquals(1, atZero.peerRank(), atZero.getMessage());
        assertTrue(atZero.getMessage().contains(because), "rank 0 says whom it refused: " + atZero.getMessage());
        return refused;
    }

    @Test
    void aRankOfAnotherJobIsRefused() throws Exception {
        refusedPair(Map.of(), 2, options(NetworkOptions.JOB_ID_OPTION, "other-job"), "job 'other-job'");
    }

    @Test
    void aRankWithAnotherWorldSizeIsRefused() throws Exception {
        refusedPair(Map.of(), 3, Map.of(), "world size 3");
    }

    @Test
    void aWrongSecretIsRefused() throws Exception {
        refusedPair(options(NetworkOptions.SECRET_OPTION, "right"), 2, options(NetworkOptions.SECRET_OPTION, "wrong"),
                "authentication failed");
    }

    @Test
    void aMissingSecretIsRefusedEitherWay() throws Exception {
        refusedPair(options(NetworkOptions.SECRET_OPTION, "right"), 2, Map.of(), "requires a shared secret");
        refusedPair(Map.of(), 2, options(NetworkOptions.SECRET_OPTION, "right"), "this job has none");
    }

    @Test
    void aRankClaimedTwiceIsRefusedOnceAndTheGroupFormsWithTheOther() throws Exception {
        String coordinator = coordinator();
        CompletableFuture<Transport> zero = start(3, 0, coordinator, FORMING, Map.of());
        CompletableFuture<Transport> first = start(3, 1, coordinator, FORMING, Map.of());
        CompletableFuture<Transport> second = start(3, 1, coordinator, FORMING, Map.of());
        // One of the two claims is refused as soon as the other holds the rank: wait for that refusal.
        CompletableFuture<Object> either = CompletableFuture.anyOf(first, second);
        try {
            either.get(FORMING.toSeconds(), TimeUnit.SECONDS);
            fail("a rank 1 formed a group of 3 before rank 2 started");
        } catch (ExecutionException refusal) {
            Throwable cause = refusal.getCause() instanceof java.util.concurrent.CompletionException c ? c.getCause()
                    : refusal.getCause();
            RefusedException refused = assertInstanceOf(RefusedException.class, cause);
            assertEquals(1, refused.rank());
            assertTrue(refused.getMessage().contains("rank 1") && refused.getMessage().contains("already"),
                    refused.getMessage());
        }
        CompletableFuture<Transport> survivor = first.isCompletedExceptionally() ? second : first;
        CompletableFuture<Transport> two = start(3, 2, coordinator, FORMING, Map.of());
        exchangeExactly(List.of(formed(zero), formed(survivor), formed(two)));
    }

    @Test
    void anImpostorCoordinatorWithoutTheSecretIsRefusedAndLearnsNothingOfTheJob() throws Exception {
        try (ServerSocket impostor = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            impostor.setSoTimeout((int) FORMING.toMillis());
            String coordinator = "127.0.0.1:" + impostor.getLocalPort();
            CompletableFuture<Transport> one = start(2, 1, coordinator, FORMING,
                    options(NetworkOptions.SECRET_OPTION, "right", NetworkOptions.JOB_ID_OPTION, "secret-job-name"));
            ByteArrayOutputStream heard = new ByteArrayOutputStream();
            try (Socket connection = impostor.accept()) {
                connection.setSoTimeout((int) FORMING.toMillis());
                OutputStream out = connection.getOutputStream();
                byte[] nonce = HandshakeProofs.newNonce();
                out.write(HandshakeRecords.challenge(nonce).array());
                out.write(HandshakeRecords.proof("guess".getBytes(StandardCharsets.UTF_8), nonce, nonce).array());
                out.flush();
                connection.getInputStream().transferTo(heard);
            } catch (IOException reset) {
                // the rank hung up, which is what it should do
            }
            RefusedException refused = assertInstanceOf(RefusedException.class, failureOf(one));
            assertEquals(0, refused.peerRank());
            assertTrue(refused.getMessage().contains("could not prove that it knows the shared secret"),
                    refused.getMessage());
            String said = heard.toString(StandardCharsets.ISO_8859_1);
            assertTrue(!said.contains("secret-job-name") && !said.contains("127.0.0.1"),
                    "the rank told an impostor about the job: " + said);
        }
    }

    @Test
    void aCoordinatorThatSendsAMalformedRecordIsRefusedAtOnceNotRetriedUntilTheTimeout() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            fake.setSoTimeout((int) FORMING.toMillis());
            long start = System.nanoTime();
            CompletableFuture<Transport> one = start(2, 1, "127.0.0.1:" + fake.getLocalPort(), FORMING, Map.of());
            try (Socket connection = fake.accept()) {
                connection.setSoTimeout((int) FORMING.toMillis());
                // A CHALLENGE of two bytes, where magic, version and nonce should be.
                connection.getOutputStream().write(new byte[] {3, 0, 0, 0, HandshakeRecords.CHALLENGE, 0, 0});
                connection.getOutputStream().flush();
                connection.getInputStream().transferTo(OutputStream.nullOutputStream());
            } catch (IOException reset) {
                // the rank hung up, which is what it should do
            }
            RefusedException refused = assertInstanceOf(RefusedException.class, failureOf(one));
            assertTrue(System.nanoTime() - start < FORMING.toNanos() / 2, "refused only after "
                    + (System.nanoTime() - start) / 1_000_000 + " ms");
            assertEquals("rendezvous", refused.operation());
            assertEquals(1, refused.rank());
            assertEquals(0, refused.peerRank());
            assertTrue(refused.getMessage().contains("malformed"), refused.getMessage());
        }
    }

    // ---- strangers' bytes ----

    /** Bytes a stranger may send: noise, a stub, a record of absurd length, a hello without the magic. */
    private static List<byte[]> garbage() {
        byte[] noise = new byte[10_000];
        new Random(7).nextBytes(noise);
        ByteBuffer huge = ByteBuffer.allocate(5).order(ByteOrder.LITTLE_ENDIAN).putInt(Integer.MAX_VALUE)
                .put(HandshakeRecords.HELLO);
        ByteBuffer noMagic = ByteBuffer.allocate(5 + 100).order(ByteOrder.LITTLE_ENDIAN).putInt(101)
                .put(HandshakeRecords.HELLO);
        return List.of(noise, new byte[] {1, 2, 3}, huge.array(), noMagic.array());
    }

    /**
     * Sends {@code bytes} to {@code where} and reads what the rank says until it closes the
     * connection: it must close it, within the bound; returns what it said.
     */
    private static String strangerAt(InetSocketAddress where, byte[] bytes) throws IOException {
        try (Socket stranger = new Socket()) {
            stranger.connect(where, 5000);
            stranger.setSoTimeout((int) FORMING.toMillis());
            try {
                stranger.getOutputStream().write(bytes);
                stranger.getOutputStream().flush();
                stranger.shutdownOutput();
            } catch (IOException closedFirst) {
                // the rank closed before it read everything: a close, as wanted
            }
            ByteArrayOutputStream heard = new ByteArrayOutputStream();
            try {
                InputStream in = stranger.getInputStream();
                byte[] chunk = new byte[4096];
                for (int n = in.read(chunk); n >= 0; n = in.read(chunk)) {
                    heard.write(chunk, 0, n);
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("a rank kept a stranger's connection open at " + where, e);
            } catch (IOException reset) {
                // a reset is a close too
            }
            return heard.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void garbageOnTheCoordinatorPortWhileTheGroupFormsIsDroppedAndLeaksNothing() throws Exception {
        String coordinator = coordinator();
        Map<String, String> secured = options(NetworkOptions.SECRET_OPTION, "s3cret", NetworkOptions.JOB_ID_OPTION,
                "secret-job-name");
        CompletableFuture<Transport> zero = start(2, 0, coordinator, FORMING, secured);
        InetSocketAddress where = new InetSocketAddress(InetAddress.getLoopbackAddress(), port(coordinator));
        long until = System.nanoTime() + FORMING.toNanos();
        for (byte[] bytes : garbage()) {
            String said = null;
            while (said == null) {
                try {
                    said = strangerAt(where, bytes);
                } catch (IOException notListeningYet) {
                    if (System.nanoTime() > until) {
                        throw notListeningYet;
                    }
                    Thread.sleep(20);
                }
            }
            assertTrue(!said.contains("secret-job-name"), "rank 0 told a stranger about the job: " + said);
        }
        CompletableFuture<Transport> one = start(2, 1, coordinator, FORMING, secured);
        exchangeExactly(List.of(formed(zero), formed(one)));
    }

    @Test
    void garbageOnEveryPortOfAFormedGroupLeavesItExact() throws Exception {
        String coordinator = coordinator();
        List<CompletableFuture<Transport>> ranks = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            ranks.add(start(3, rank, coordinator, FORMING, options(NetworkOptions.SECRET_OPTION, "s3cret")));
        }
        List<Transport> group = new ArrayList<>();
        for (CompletableFuture<Transport> rank : ranks) {
            group.add(formed(rank));
        }
        try (DatagramSocket udp = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            for (Transport rank : group) {
                for (InetSocketAddress where : tcpListeners(rank)) {
                    for (byte[] bytes : garbage()) {
                        strangerAt(where, bytes);
                    }
                }
                for (InetSocketAddress where : udpListeners(rank)) {
                    for (byte[] bytes : garbage()) {
                        int length = Math.min(bytes.length, 1400);
                        for (int i = 0; i < 20; i++) {
                            udp.send(new DatagramPacket(bytes, length, where));
                        }
                    }
                }
            }
        }
        exchangeExactly(group);
    }
}
