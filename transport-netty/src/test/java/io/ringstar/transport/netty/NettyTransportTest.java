package io.ringstar.transport.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.AllReduceAggregator;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.InvalidConfigException;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.config.NetworkOptions;
import io.ringstar.spi.Frame;
import io.ringstar.spi.WaitSchedule;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.testing.Ranks;
import io.ringstar.testing.TensorFixtures;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/** What the Netty transport promises beyond the shared contract: rendezvous, handshake, security, framing, ports. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NettyTransportTest {
    private static final Duration LIMIT = Duration.ofSeconds(40);
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeEverything() throws Exception {
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
    }

    private List<Transport> group(int worldSize, Duration timeout, Map<String, String> options) {
        List<Transport> transports = NettyGroups.open(worldSize, timeout, options);
        opened.addAll(transports);
        return transports;
    }

    private static DistributedConfig config(int worldSize, int rank, String coordinator, Duration timeout,
            String... options) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < options.length; i += 2) {
            map.put(options[i], options[i + 1]);
        }
        return NettyGroups.config(worldSize, rank, coordinator, timeout, map);
    }

    /** Opens rank {@code rank} on another thread; the future completes when its constructor returns or throws. */
    private CompletableFuture<NettyTransport> openAsync(DistributedConfig config) {
        CompletableFuture<NettyTransport> future = CompletableFuture.supplyAsync(() -> new NettyTransport(config));
        opened.add(() -> {
            try {
                future.get(LIMIT.toSeconds(), TimeUnit.SECONDS).close();
            } catch (Exception ignored) {
                // it failed to open, which is what some tests expect
            }
        });
        return future;
    }

    private static Throwable failureOf(CompletableFuture<?> future) {
        Throwable thrown = assertThrows(Exception.class, () -> future.get(LIMIT.toSeconds(), TimeUnit.SECONDS));
        return thrown.getCause();
    }

    /** Every rank averages TensorFixtures' tensors {@code calls} times and checks each result exactly. */
    static void averageExactly(List<Transport> transports, int calls) {
        int worldSize = transports.size();
        Ranks.runAll(worldSize, LIMIT, rank -> {
            DistributedConfig config = DistributedConfig.builder().worldSize(worldSize).rank(rank).build();
            GradientAggregator ring = new AllReduceAggregator(config, Transports.borrowed(transports.get(rank)));
            for (int call = 0; call < calls; call++) {
                INDArray[] inputs = {TensorFixtures.filled(DataType.FLOAT, rank, 0, 1009),
                        TensorFixtures.filled(DataType.FLOAT, rank, 1, 3, 7)};
                INDArray[] results = ring.reduceGradients(inputs);
                for (int t = 0; t < inputs.length; t++) {
                    double[] values = TensorFixtures.values(results[t]);
                    for (int i = 0; i < values.length; i++) {
                        assertEquals(TensorFixtures.average(worldSize, t, i), values[i], 0.0,
                                "rank " + rank + " call " + call + " tensor " + t + " element " + i);
                    }
                }
            }
            return null;
        });
    }

    // ---- rendezvous ----

    @Test
    void rankZeroNamesTheRanksThatNeverRegistered() throws Exception {
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        // Rank 1 waits longer than rank 0, so it is there when rank 0 gives up, and hears why.
        CompletableFuture<NettyTransport> one = openAsync(config(4, 1, coordinator, Duration.ofSeconds(20)));
        long start = System.nanoTime();
        CollectiveTimeoutException timeout = assertThrows(CollectiveTimeoutException.class,
                () -> new NettyTransport(config(4, 0, coordinator, Duration.ofSeconds(4))));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
        assertTrue(timeout.getMessage().contains("ranks [2, 3] did not register"), timeout.getMessage());
        assertEquals(0, timeout.rank());
        Throwable atOne = failureOf(one);
        assertInstanceOf(CollectiveTimeoutException.class, atOne);
        assertTrue(atOne.getMessage().contains("rank 0 gave up forming the group: ranks [2, 3] did not register"),
                atOne.getMessage());
    }

    @Test
    void aRankWithNoCoordinatorGivesUpAtTheTimeoutSayingWhy() {
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        long start = System.nanoTime();
        CollectiveTimeoutException timeout = assertThrows(CollectiveTimeoutException.class,
                () -> new NettyTransport(config(2, 1, coordinator, Duration.ofSeconds(2))));
        long elapsed = System.nanoTime() - start;
        assertTrue(elapsed >= TimeUnit.MILLISECONDS.toNanos(1900) && elapsed < TimeUnit.SECONDS.toNanos(8),
                "gave up after " + elapsed / 1e6 + " ms");
        assertTrue(timeout.getMessage().contains("rank 0 at " + coordinator), timeout.getMessage());
        assertTrue(timeout.getMessage().toLowerCase().contains("refused"), timeout.getMessage());
    }

    // ---- handshake ----

    @Test
    void ranksWithTheSameSecretFormAGroup(@TempDir Path directory) throws IOException {
        Path secretFile = directory.resolve("secret");
        Files.writeString(secretFile, "correct horse battery staple\n", StandardCharsets.UTF_8);
        // Rank by rank the same secret, once inline and once from a file (trailing newline ignored).
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        Duration timeout = Duration.ofSeconds(20);
        List<Transport> transports = Ranks.runAll(3, LIMIT, rank -> new NettyTransport(rank == 1
                ? config(3, rank, coordinator, timeout, NettyTransport.SECRET_FILE_OPTION, secretFile.toString())
                : config(3, rank, coordinator, timeout, NettyTransport.SECRET_OPTION, "correct horse battery staple")));
        opened.addAll(transports);
        averageExactly(transports, 1);
    }

    @Test
    void anEmptySecretIsAConfigurationError(@TempDir Path directory) throws IOException {
        Path empty = Files.writeString(directory.resolve("empty"), "  \n");
        assertThrows(InvalidConfigException.class, () -> new NettyTransport(config(2, 0, "127.0.0.1:1",
                Duration.ofSeconds(1), NettyTransport.SECRET_FILE_OPTION, empty.toString())));
        assertThrows(InvalidConfigException.class, () -> new NettyTransport(config(2, 0, "127.0.0.1:1",
                Duration.ofSeconds(1), NettyTransport.SECRET_FILE_OPTION, directory.resolve("missing").toString())));
    }

    // ---- bad bytes ----

    @Test
    void aRegisteredPeerThatSendsGarbageIsAFailedPeerNamedInTheError() throws Exception {
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        // The network path: the fake rank answers the shared-memory negotiation with a plain "none".
        CompletableFuture<NettyTransport> zero = openAsync(config(2, 0, coordinator, Duration.ofSeconds(20),
                NetworkOptions.SHARED_MEMORY_OPTION, NetworkOptions.SHARED_MEMORY_OFF));
        int port = Integer.parseInt(coordinator.substring(coordinator.indexOf(':') + 1));
        FakeRank fake = null;
        for (int attempt = 0; fake == null; attempt++) {
            try {
                fake = new FakeRank("127.0.0.1", port);
            } catch (IOException notYet) {
                if (attempt > 100) {
                    throw notYet;
                }
                Thread.sleep(50);
            }
        }
        try (FakeRank rankOne = fake) {
            FakeRank.Record welcome = rankOne.hello(null, new Identity(HandshakeRecords.PURPOSE_REGISTER,
                    NettyTransport.DEFAULT_JOB_ID, 2, 1, 0, "127.0.0.1", 1, null));
            assertEquals(HandshakeRecords.WELCOME, welcome.type());
            assertEquals(HandshakeRecords.TABLE, rankOne.read().type());
            ByteBuffer none = ByteBuffer.allocate(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            Frame.write(none, 0, Frame.SHM_NONE, 0);
            rankOne.write(none);
            NettyTransport rankZero = zero.get(20, TimeUnit.SECONDS);
            // A frame header announcing a message of -1 bytes: no message is that long.
            ByteBuffer garbage = ByteBuffer.allocate(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            Frame.write(garbage, 0, Frame.DATA, -1);
            rankOne.write(garbage);
            PeerFailureException failure = assertThrows(PeerFailureException.class,
                    () -> rankZero.recv(1, ByteBuffer.allocate(16)));
            assertEquals(1, failure.peerRank());
            assertTrue(failure.getMessage().contains("rank 1 sent a message length of -1 bytes"), failure.getMessage());
            assertThrows(PeerFailureException.class, () -> rankZero.send(1, ByteBuffer.allocate(8)));
        }
    }

    @Test
    void ranksOnLoopbackCountAsOneHostAndStopSpinningWhenTheyOutnumberTheCores() {
        int cores = Runtime.getRuntime().availableProcessors();
        for (int worldSize : new int[] {2, 3}) {
            long expected = worldSize > cores ? 0 : WaitSchedule.SPIN_NANOS;
            for (Transport transport : group(worldSize, Duration.ofSeconds(20), Map.of())) {
                String what = worldSize + " ranks on " + cores + " cores, rank " + transport.rank();
                assertEquals(worldSize, ((NettyTransport) transport).waitSchedule().busyThreadsOnThisHost(), what);
                assertEquals(expected, ((NettyTransport) transport).waitSchedule().spinNanos(), what);
            }
        }
        for (Transport transport : group(3, Duration.ofSeconds(20), Map.of(NetworkOptions.WAIT_SPIN_OPTION, "on"))) {
            assertEquals(WaitSchedule.SPIN_NANOS, ((NettyTransport) transport).waitSchedule().spinNanos(),
                    "waitSpin=on");
        }
        for (Transport transport : group(2, Duration.ofSeconds(20), Map.of(NetworkOptions.WAIT_SPIN_OPTION, "off"))) {
            assertEquals(0, ((NettyTransport) transport).waitSchedule().spinNanos(), "waitSpin=off");
        }
    }

    @Test
    void messagesLongerThanEveryBufferOnTheWayArriveIntact() {
        List<Transport> transports = group(2, Duration.ofSeconds(20), Map.of());
        int length = (12 << 20) + 12345;
        ByteBuffer header = ByteBuffer.allocate(48);
        for (int i = 0; i < 48; i++) {
            header.put(i, (byte) (100 + i));
        }
        ByteBuffer payload = ByteBuffer.allocateDirect(length);
        for (int i = 0; i < length; i++) {
            payload.put(i, (byte) (i * 31 + 7));
        }
        Ranks.runAll(2, LIMIT, rank -> {
            if (rank == 0) {
                transports.get(0).send(1, header, payload);
            } else {
                ByteBuffer into = ByteBuffer.allocateDirect(48 + length);
                transports.get(1).recv(0, into);
                into.flip();
                assertEquals(header, into.slice(0, 48));
                assertEquals(payload, into.slice(48, length));
            }
            return null;
        });
    }

    @Test
    void aReceiverThatLagsPausesTheSenderInsteadOfBufferingWithoutBound() {
        // With 1 MiB allowed to wait per peer, 48 messages of 1 MiB cannot all be buffered at the
        // receiver; the sender must be held back until the receiver starts reading, and every byte
        // must still arrive in order.
        List<Transport> transports = group(2, Duration.ofSeconds(30),
                Map.of(NettyTransport.RECEIVE_BUFFER_OPTION, Integer.toString(1 << 20)));
        int messages = 48;
        int length = 1 << 20;
        AtomicInteger sent = new AtomicInteger();
        int[] sentWhenHeldBack = new int[1];
        Ranks.runAll(2, LIMIT, rank -> {
            if (rank == 0) {
                for (int m = 0; m < messages; m++) {
                    ByteBuffer message = ByteBuffer.allocateDirect(length);
                    message.putInt(0, m);
                    transports.get(0).send(1, message);
                    sent.incrementAndGet();
                }
            } else {
                sentWhenHeldBack[0] = awaitSenderHeldBack(sent, messages);
                ByteBuffer into = ByteBuffer.allocateDirect(length);
                for (int m = 0; m < messages; m++) {
                    into.clear();
                    transports.get(1).recv(0, into);
                    assertEquals(m, into.getInt(0));
                }
            }
            return null;
        });
        assertTrue(sentWhenHeldBack[0] < messages, "the sender sent all " + messages + " messages to a receiver that"
                + " read none, so nothing held it back");
    }

    /**
     * Polls the sender's count until it stops moving for half a second short of {@code messages}
     * (held back), or reaches it, or 20 s pass; returns the count then.
     */
    private static int awaitSenderHeldBack(AtomicInteger sent, int messages) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int last = -1;
        long stillSince = System.nanoTime();
        while (System.nanoTime() < until) {
            int now = sent.get();
            if (now == messages) {
                return now;
            }
            if (now != last) {
                last = now;
                stillSince = System.nanoTime();
            } else if (now > 0 && System.nanoTime() - stillSince > TimeUnit.MILLISECONDS.toNanos(500)) {
                return now;
            }
            Thread.sleep(10);
        }
        return sent.get();
    }

    // ---- addresses and ports ----

    @Test
    void closeReleasesThePortsForTheNextGroup() {
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        for (int round = 0; round < 2; round++) {
            List<Transport> transports = Ranks.runAll(3, LIMIT,
                    rank -> new NettyTransport(config(3, rank, coordinator, Duration.ofSeconds(20))));
            try {
                averageExactly(transports, 1);
            } finally {
                transports.forEach(Transport::close);
            }
        }
        List<String> left = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(name -> name.startsWith("ringstar-netty-")).toList();
        assertTrue(left.isEmpty(), "threads left running: " + left);
    }

    @Test
    void ranksListenWhereTheBindOptionSays() {
        // By interface name, by CIDR block and by address; all loopback, each a different rank.
        String coordinator = "127.0.0.1:" + NettyGroups.freePort();
        String[] binds = {"127.0.0.1", "lo", "127.0.0.0/8"};
        List<Transport> transports = Ranks.runAll(3, LIMIT, rank -> new NettyTransport(
                config(3, rank, coordinator, Duration.ofSeconds(20), NettyTransport.BIND_OPTION, binds[rank])));
        opened.addAll(transports);
        averageExactly(transports, 1);
    }

    @Test
    void aBindSpecThatMatchesNothingIsAConfigurationError() {
        InvalidConfigException error = assertThrows(InvalidConfigException.class, () -> new NettyTransport(
                config(2, 1, "127.0.0.1:1", Duration.ofSeconds(1), NettyTransport.BIND_OPTION, "240.0.0.0/8")));
        assertTrue(error.getMessage().contains("matches none"), error.getMessage());
    }

    @Test
    void ipv6LoopbackWorks() throws Exception {
        InetAddress loopback6 = InetAddress.getByName("::1");
        boolean available;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, loopback6)) {
            available = probe.getInetAddress() instanceof Inet6Address;
        } catch (IOException e) {
            available = false;
        }
        Assumptions.assumeTrue(available, "this host has no IPv6 loopback");
        String coordinator = "[::1]:" + NettyGroups.freePort();
        List<Transport> transports = Ranks.runAll(3, LIMIT,
                rank -> new NettyTransport(config(3, rank, coordinator, Duration.ofSeconds(20))));
        opened.addAll(transports);
        averageExactly(transports, 1);
    }

    @Test
    void aGroupOfOneNeedsNoNetwork() {
        try (NettyTransport alone = new NettyTransport(config(1, 0, "127.0.0.1:1", Duration.ofSeconds(1)))) {
            assertEquals(-1, alone.listenPort());
            alone.barrier();
        }
    }

    @Test
    void closeWakesACallerBlockedOnThatTransport() throws Exception {
        List<Transport> transports = group(2, Duration.ofSeconds(30), Map.of());
        AtomicReference<Thread> caller = new AtomicReference<>();
        CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() -> {
            caller.set(Thread.currentThread());
            try {
                transports.get(0).recv(1, ByteBuffer.allocate(4));
                return null;
            } catch (RuntimeException e) {
                return e;
            }
        });
        awaitWaitingInside(caller, "recv");
        long start = System.nanoTime();
        transports.get(0).close();
        Throwable woken = waiting.get(10, TimeUnit.SECONDS);
        assertInstanceOf(IllegalStateException.class, woken);
        assertTrue(woken.getMessage().contains("recv on rank 0: the transport is closed"), woken.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        // The peer sees the goodbye as such.
        PeerFailureException atPeer = assertThrows(PeerFailureException.class,
                () -> transports.get(1).recv(0, ByteBuffer.allocate(4)));
        assertTrue(atPeer.getMessage().contains("rank 0 closed its transport"), atPeer.getMessage());
    }

    /** Polls (at most 10 s) until {@code caller} waits inside a method named {@code method}. */
    static void awaitWaitingInside(AtomicReference<Thread> caller, String method) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until) {
            Thread thread = caller.get();
            if (thread != null) {
                StackTraceElement[] stack = thread.getStackTrace();
                boolean inside = java.util.Arrays.stream(stack).anyMatch(frame -> frame.getMethodName().equals(method)
                        && frame.getClassName().startsWith("io.ringstar"));
                Thread.State state = thread.getState();
                boolean waiting = state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING
                        || (stack.length > 0 && stack[0].isNativeMethod());
                if (inside && waiting) {
                    return;
                }
            }
            Thread.sleep(5);
        }
        throw new AssertionError("the caller did not wait inside " + method + " within 10 s");
    }
}
