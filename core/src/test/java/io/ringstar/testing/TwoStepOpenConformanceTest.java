package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.config.NetworkOptions;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.spi.BoundTransport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The two-step open ({@link Transports#bind}, {@link BoundTransport}), written once: rank 0 binds
 * any free port and reports it, the other ranks open with that address, rank 0 joins (at once, or
 * after the others have waited), and the group all-reduces exactly; the port is free again after a
 * close without a join and after a join that failed; a second join is refused; a bad option is
 * refused before anything is bound; {@link Transports#open} still refuses port 0 for rank 0. A
 * transport's test module extends it and supplies {@link #config}. Ranks run as threads of this JVM,
 * through {@link Transports}, as a launcher would call it; every wait is bounded.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TwoStepOpenConformanceTest {
    /** The bound on forming the group in tests that expect it to form. */
    protected static final Duration FORMING = Duration.ofSeconds(20);
    /** The timeout of a rank 0 that must give up. */
    protected static final Duration GIVING_UP = Duration.ofSeconds(3);
    /** How long after its timeout a join that gives up may take to have thrown and released everything. */
    private static final Duration GRACE = Duration.ofSeconds(10);
    private static final int WORLD_SIZE = 3;
    /** Element counts of the tensors of one all-reduce: empty, one, a prime, a prime past the small-message path. */
    private static final long[] COUNTS = {0, 1, 1021, 65_537};

    private final List<CompletableFuture<Transport>> opened = new ArrayList<>();
    private final List<AutoCloseable> owned = new ArrayList<>();

    /**
     * A configuration of this transport for {@code rank} of a group of {@code worldSize} around
     * {@code coordinator}, with {@code options} added (and any the transport's tests need).
     */
    protected abstract DistributedConfig config(int worldSize, int rank, String coordinator, Duration timeout,
            Map<String, String> options);

    /**
     * A coordinator address for rank 0 to bind: a loopback address with port 0, by default. Each call
     * may give a new one (the in-process transport's groups are known by their address).
     */
    protected String anyAddress() {
        return "127.0.0.1:0";
    }

    /**
     * Whether the transport binds ports (true by default): then rank 0 reports the port it bound,
     * {@link Transports#open} refuses port 0 for rank 0, and the tests check ports are free. The
     * in-process transport binds nothing and reports the address it was given.
     */
    protected boolean bindsPorts() {
        return true;
    }

    /** Options of this transport with a value it refuses. */
    protected Map<String, String> refusedOptions() {
        return Map.of(NetworkOptions.RECEIVE_BUFFER_OPTION, "1000");
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (CompletableFuture<Transport> rank : opened) {
            rank.whenComplete((transport, error) -> {
                if (transport != null) {
                    transport.close();
                }
            });
        }
        for (AutoCloseable resource : owned) {
            resource.close();
        }
    }

    private DistributedConfig config(int rank, String coordinator, Duration timeout) {
        return config(WORLD_SIZE, rank, coordinator, timeout, Map.of());
    }

    private BoundTransport bind(DistributedConfig config) {
        BoundTransport bound = Transports.bind(config);
        owned.add(bound);
        return bound;
    }

    /** Opens {@code rank} with {@link Transports#open} on a thread of its own, as another process would. */
    private CompletableFuture<Transport> open(DistributedConfig config) {
        CompletableFuture<Transport> future = CompletableFuture.supplyAsync(() -> Transports.open(config), task -> {
            Thread thread = new Thread(task, "two-step-rank" + config.rank());
            thread.setDaemon(true);
            thread.start();
        });
        opened.add(future);
        return future;
    }

    private static int portOf(String address) {
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    /**
     * True if nothing listens on loopback at {@code port}: a server socket can take it now. With
     * SO_REUSEADDR, as every listener here sets it: the connections a rank closed may linger in
     * TIME_WAIT on the port, which that lets a new listener pass, but never a listener still open.
     */
    private static boolean loopbackPortFree(int port) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    // ---- the group forms and computes ----

    @Test
    void rankZeroBindsAnyFreePortTheOthersOpenWithItsAddressAndTheGroupReducesExactly() throws Exception {
        formAndReduce(0);
    }

    @Test
    void rankZeroMayJoinLastWhileTheOthersAlreadyWait() throws Exception {
        formAndReduce(1500);
    }

    /** Rank 0 binds, ranks 1 and 2 open with its address, rank 0 joins after {@code joinAfterMillis}. */
    private void formAndReduce(long joinAfterMillis) throws Exception {
        DistributedConfig zero = config(0, anyAddress(), FORMING);
        BoundTransport bound = bind(zero);
        String address = bound.address();
        if (bindsPorts()) {
            assertNotEquals(0, portOf(address), "rank 0 reported " + address);
            assertFalse(address.startsWith("0.0.0.0"), "rank 0 reported the wildcard: " + address);
        }
        List<CompletableFuture<Transport>> others = List.of(open(config(1, address, FORMING)),
                open(config(2, address, FORMING)));
        if (joinAfterMillis > 0) {
            Thread.sleep(joinAfterMillis);
            for (CompletableFuture<Transport> other : others) {
                assertFalse(other.isDone(), "a rank formed a group of " + WORLD_SIZE + " before rank 0 joined: "
                        + other);
            }
        }
        Transport rankZero = bound.join();
        List<Transport> group = new ArrayList<>(List.of(rankZero));
        for (CompletableFuture<Transport> other : others) {
            group.add(other.get(FORMING.plus(GRACE).toSeconds(), TimeUnit.SECONDS));
        }
        assertThrows(IllegalStateException.class, bound::join, "a second join");
        List<DistributedConfig> configs = List.of(zero, config(1, address, FORMING), config(2, address, FORMING));
        Ranks.runAll(WORLD_SIZE, FORMING.plus(GRACE), rank -> {
            assertEquals(rank, group.get(rank).rank());
            try (Communicator communicator = new Communicator(configs.get(rank), group.get(rank))) {
                INDArray[] tensors = new INDArray[COUNTS.length];
                for (int t = 0; t < tensors.length; t++) {
                    int tensor = t;
                    tensors[t] = CollectiveClosedForm.filled(ElementType.FLOAT, i -> CollectiveClosedForm.value(
                            ReduceOp.SUM, ElementType.FLOAT, WORLD_SIZE, rank, tensor, i), COUNTS[t]);
                }
                communicator.allReduce(ReduceOp.SUM, tensors);
                for (int t = 0; t < tensors.length; t++) {
                    int tensor = t;
                    CollectiveClosedForm.check("allReduce on rank " + rank + ", tensor " + t, tensors[t],
                            ElementType.FLOAT, new long[] {COUNTS[t]}, i -> (float) CollectiveClosedForm.expected(
                                    ReduceOp.SUM, ElementType.FLOAT, WORLD_SIZE, tensor, i));
                }
            }
            return null;
        });
    }

    // ---- what the bound transport refuses, and what it frees ----

    @Test
    void closingWithoutJoiningFreesTheAddressAtOnceAndAJoinAfterItIsRefused() {
        BoundTransport bound = Transports.bind(config(0, anyAddress(), FORMING));
        String address = bound.address();
        bound.close();
        bound.close();
        assertThrows(IllegalStateException.class, bound::join, "a join after close");
        if (bindsPorts()) {
            assertTrue(loopbackPortFree(portOf(address)), "rank 0's port " + address + " is still taken");
        }
        // The same address at once, as a launcher that gave up and starts again would take it.
        try (BoundTransport again = Transports.bind(config(0, address, FORMING))) {
            assertEquals(address, again.address());
        }
    }

    @Test
    void anotherRankBindsItsOwnListenerWhichACloseFrees() {
        assumeTrue(bindsPorts(), "a transport that binds ports");
        String coordinator = "127.0.0.1:" + Ports.freeLoopbackPort();
        String address;
        try (BoundTransport one = Transports.bind(config(1, coordinator, FORMING))) {
            address = one.address();
            assertNotEquals(coordinator, address);
            assertNotEquals(0, portOf(address), "rank 1 reported " + address);
        }
        Map<String, String> samePort = Map.of(NetworkOptions.PORT_OPTION, Integer.toString(portOf(address)));
        try (BoundTransport again = Transports.bind(config(WORLD_SIZE, 1, coordinator, FORMING, samePort))) {
            assertEquals(address, again.address());
        }
    }

    @Test
    void aBadOptionIsRefusedBeforeAnythingIsBound() {
        int port = Ports.freeLoopbackPort();
        String any = anyAddress();
        String coordinator = any.substring(0, any.lastIndexOf(':') + 1) + port;
        assertThrows(InvalidConfigException.class,
                () -> Transports.bind(config(WORLD_SIZE, 0, coordinator, FORMING, refusedOptions())));
        assertThrows(InvalidConfigException.class,
                () -> Transports.bind(config(WORLD_SIZE, 0, coordinator, FORMING, Map.of("noSuchOption", "1"))));
        if (bindsPorts()) {
            assertTrue(loopbackPortFree(port), "a refused bind left port " + port + " taken");
            // The others join rank 0 where it listens: they need its real port.
            InvalidConfigException noPort = assertThrows(InvalidConfigException.class,
                    () -> Transports.bind(config(1, anyAddress(), FORMING)));
            assertTrue(noPort.getMessage().contains("coordinatorAddr"), noPort.getMessage());
        }
    }

    @Test
    void openStillRefusesPortZeroForRankZeroAndNamesTheTwoStepOpen() {
        assumeTrue(bindsPorts(), "a transport that binds ports");
        InvalidConfigException refused = assertThrows(InvalidConfigException.class,
                () -> Transports.open(config(0, anyAddress(), FORMING)));
        assertTrue(refused.getMessage().contains("needs a fixed port")
                && refused.getMessage().contains("Transports.bind"), refused.getMessage());
    }

    @Test
    void aRankThatNeverComesIsNamedWithinTheTimeoutAndTheAddressIsFreeAfterwards() throws Exception {
        BoundTransport bound = bind(config(0, anyAddress(), GIVING_UP));
        String address = bound.address();
        // Rank 1 waits longer, so that rank 0 gives up while rank 1 is still there: the missing rank is 2.
        open(config(1, address, GIVING_UP.multipliedBy(3)));
        Thread.sleep(500);
        long start = System.nanoTime();
        CollectiveTimeoutException timeout = assertThrows(CollectiveTimeoutException.class, bound::join);
        long elapsed = System.nanoTime() - start;
        assertEquals(0, timeout.rank());
        assertEquals(2, timeout.peerRank(), timeout.getMessage());
        assertTrue(elapsed >= GIVING_UP.toNanos() && elapsed < GIVING_UP.plus(GRACE).toNanos(),
                "gave up " + elapsed / 1_000_000 + " ms after the join, with a timeout of " + GIVING_UP);
        assertThrows(IllegalStateException.class, bound::join, "a join after a failed one");
        if (bindsPorts()) {
            assertTrue(loopbackPortFree(portOf(address)), "rank 0's port " + address + " is still taken");
        }
        try (BoundTransport again = Transports.bind(config(0, address, FORMING))) {
            assertEquals(address, again.address());
        }
    }

    @Test
    void aGroupOfOneJoinsAlone() {
        String any = anyAddress();
        BoundTransport bound = bind(config(1, 0, any, FORMING, Map.of()));
        assertEquals(any, bound.address(), "a group of one binds nothing");
        try (Transport transport = bound.join()) {
            assertEquals(1, transport.worldSize());
            transport.barrier();
        }
    }
}
