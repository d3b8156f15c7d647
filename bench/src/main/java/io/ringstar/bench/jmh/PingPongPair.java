package io.ringstar.bench.jmh;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.ranks.RankThreads;
import io.ringstar.spi.LoopbackPorts;
import io.ringstar.transport.aeron.AeronTransport;
import io.ringstar.transport.inproc.InProcessTransport;
import io.ringstar.transport.netty.NettyTransport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;

/**
 * Two ranks of one group in this JVM for a ping-pong: rank 0 belongs to the caller, rank 1 to an
 * echo thread that sends every message it receives straight back. {@link #roundTrip} is one ping
 * and its pong.
 *
 * <p>Media ({@link #MEDIA}): {@code inproc}; {@code netty} over TCP on loopback; {@code aeron-udp},
 * each rank with its own embedded media driver, over UDP on loopback; {@code aeron-ipc}, both ranks
 * clients of one {@link SharedMediaProcess} (a separate process, as ranks on one host share it).
 *
 * <p>Ownership: the pair owns its transports, the echo thread and the shared driver; {@link #close}
 * releases them all. Blocking: {@link #open} blocks until the group has formed, at most the timeout
 * plus 30 s; {@link #roundTrip} at most twice the timeout. The echo thread waits for a ping at most
 * {@link #ECHO_POLL} at a time, so it notices {@link #close} within that. Not thread-safe: one caller
 * of {@code roundTrip} at a time.
 */
public final class PingPongPair implements AutoCloseable {
    /** The media {@link #open} accepts, in the order benchmarks list them. */
    public static final List<String> MEDIA = List.of("inproc", "netty", "aeron-udp", "aeron-ipc");
    /** The echo thread's longest wait for a ping before it looks at the stop flag again. */
    static final Duration ECHO_POLL = Duration.ofMillis(100);
    /** How long {@link #close} waits for the echo thread to end. */
    static final Duration ECHO_STOP_LIMIT = Duration.ofSeconds(10);

    private final String medium;
    private final List<Transport> transports;
    private final SharedMediaProcess sharedDriver;
    private final Thread echo;
    private final ByteBuffer echoBuffer;
    private volatile boolean echoing = true;
    private volatile Throwable echoFailure;
    private boolean closed;

    private PingPongPair(String medium, List<Transport> transports, SharedMediaProcess sharedDriver, int maxBytes) {
        this.medium = medium;
        this.transports = transports;
        this.sharedDriver = sharedDriver;
        this.echoBuffer = ByteBuffer.allocateDirect(maxBytes);
        this.echo = new Thread(this::echoLoop, "ringstar-pingpong-echo-" + medium);
        echo.setDaemon(true);
        echo.start();
    }

    /**
     * Opens both ranks over {@code medium} and starts the echo thread.
     *
     * @param maxBytes the longest message the echo thread takes
     * @param timeout the transports' timeout: bounds forming the group and every send and receive
     * @throws IllegalArgumentException for a medium not in {@link #MEDIA}
     */
    public static PingPongPair open(String medium, int maxBytes, Duration timeout) {
        String name = medium.toLowerCase(Locale.ROOT);
        if (!MEDIA.contains(name)) {
            throw new IllegalArgumentException("unknown medium '" + medium + "'; one of " + MEDIA);
        }
        if (name.equals("inproc")) {
            return new PingPongPair(name, InProcessTransport.createGroup(2, timeout), null, maxBytes);
        }
        SharedMediaProcess driver = name.equals("aeron-ipc") ? SharedMediaProcess.start(timeout) : null;
        try {
            String coordinator = "127.0.0.1:" + LoopbackPorts.free();
            List<Transport> transports = openNetworked(rank -> {
                DistributedConfig.Builder config = DistributedConfig.builder().worldSize(2).rank(rank)
                        .coordinatorAddr(coordinator).timeout(timeout)
                        .transport(name.equals("netty") ? NettyTransport.NAME : AeronTransport.NAME);
                if (driver != null) {
                    config.option(AeronTransport.DIR_OPTION, driver.directory());
                }
                return config.build();
            }, timeout);
            return new PingPongPair(name, transports, driver, maxBytes);
        } catch (RuntimeException | Error e) {
            if (driver != null) {
                driver.close();
            }
            throw e;
        }
    }

    private static List<Transport> openNetworked(IntFunction<DistributedConfig> config, Duration timeout) {
        try (RankThreads threads = new RankThreads(2)) {
            Transport[] opened = new Transport[2];
            try {
                // Both at once: each constructor blocks until the other rank has joined.
                threads.run(rank -> opened[rank] = Transports.open(config.apply(rank)), timeout.plusSeconds(30));
                return List.of(opened);
            } catch (RuntimeException e) {
                try {
                    closeAll(threads, opened, timeout);
                } catch (RuntimeException cleanup) {
                    e.addSuppressed(cleanup);
                }
                throw e;
            }
        }
    }

    /** The medium this pair runs over. */
    public String medium() {
        return medium;
    }

    /**
     * Sends {@code ping} (its bytes between position and limit, which stay as they are) from rank 0
     * to rank 1 and receives the echo into {@code pong}, which must have exactly that many bytes
     * remaining; its position advances by them.
     *
     * @throws io.ringstar.CollectiveException from the transport, for example a timeout if the echo
     *     thread has failed (the failure is then rethrown by {@link #close})
     */
    public void roundTrip(ByteBuffer ping, ByteBuffer pong) {
        Transport rank0 = transports.get(0);
        rank0.send(1, ping);
        rank0.recv(1, pong);
    }

    private void echoLoop() {
        Transport rank1 = transports.get(1);
        try {
            while (echoing) {
                echoBuffer.clear();
                try {
                    rank1.recvAtMost(0, echoBuffer, ECHO_POLL);
                } catch (CollectiveTimeoutException idle) {
                    continue;
                }
                echoBuffer.flip();
                rank1.send(0, echoBuffer);
            }
        } catch (RuntimeException | Error e) {
            // After close has begun, a failure is the transport going away under the thread.
            if (echoing) {
                echoFailure = e;
            }
        }
    }

    /** The shared driver's directory for {@code aeron-ipc}, else null. */
    String sharedDriverDirectory() {
        return sharedDriver == null ? null : sharedDriver.directory();
    }

    /** Whether the echo thread is still running; false once {@link #close} has returned. */
    boolean echoRunning() {
        return echo.isAlive();
    }

    /**
     * Stops the echo thread (waiting at most {@link #ECHO_STOP_LIMIT}), closes both transports and
     * stops the shared driver. Idempotent.
     *
     * @throws IllegalStateException if the echo thread had failed, or did not end in time (it is then
     *     interrupted and the transports are closed under it)
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        echoing = false;
        boolean stopped = join(echo, ECHO_STOP_LIMIT);
        try (RankThreads threads = new RankThreads(2)) {
            // Together: a closing network rank waits for its peer's goodbye.
            closeAll(threads, transports.toArray(new Transport[0]), Duration.ofSeconds(30));
        } finally {
            if (sharedDriver != null) {
                sharedDriver.close();
            }
        }
        if (!stopped) {
            echo.interrupt();
            throw new IllegalStateException("the " + medium + " ping-pong's echo thread (rank 1) did not stop within "
                    + ECHO_STOP_LIMIT);
        }
        if (echoFailure != null) {
            throw new IllegalStateException("the " + medium + " ping-pong's echo thread (rank 1) failed: "
                    + echoFailure,
                    echoFailure);
        }
    }

    private static boolean join(Thread thread, Duration limit) {
        try {
            thread.join(limit.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    private static void closeAll(RankThreads threads, Transport[] transports, Duration limit) {
        threads.run(rank -> {
            if (transports[rank] != null) {
                transports[rank].close();
            }
            return null;
        }, limit);
    }
}
