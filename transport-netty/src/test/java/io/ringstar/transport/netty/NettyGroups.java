package io.ringstar.transport.netty;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.NetworkOptions;
import io.ringstar.testing.Ports;
import io.ringstar.testing.Ranks;
import io.ringstar.testing.SharedMemoryAssertions;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Groups of {@link NettyTransport}s in one JVM, each rank on its own loopback sockets. */
final class NettyGroups {
    private NettyGroups() {
    }

    /** A port that was free on loopback a moment ago. */
    static int freePort() {
        return Ports.freeLoopbackPort();
    }

    /** A configuration for {@code rank} of a group around {@code coordinator}, with extra options. */
    static DistributedConfig config(int worldSize, int rank, String coordinator, Duration timeout,
            Map<String, String> options) {
        DistributedConfig.Builder builder = DistributedConfig.builder()
                .worldSize(worldSize).rank(rank).coordinatorAddr(coordinator).transport(NettyTransport.NAME)
                .timeout(timeout);
        options.forEach(builder::option);
        return builder.build();
    }

    /**
     * Opens {@code worldSize} ranks at once on a fresh loopback port; element r is rank r. Checks
     * once that every pair talks through shared memory, or, with option {@code sharedMemory=off},
     * that none does.
     */
    static List<Transport> open(int worldSize, Duration timeout, Map<String, String> options) {
        String coordinator = "127.0.0.1:" + freePort();
        List<Transport> group = Ranks.openAll(worldSize, timeout.plusSeconds(10),
                rank -> new NettyTransport(config(worldSize, rank, coordinator, timeout, options)));
        try {
            if (NetworkOptions.SHARED_MEMORY_OFF.equals(options.get(NetworkOptions.SHARED_MEMORY_OPTION))) {
                SharedMemoryAssertions.assertNoPairSharesMemory(group);
            } else {
                SharedMemoryAssertions.assertAllPairsShareMemory(group);
            }
        } catch (AssertionError e) {
            group.forEach(Transport::close);
            throw e;
        }
        return group;
    }

    /** The network path only: option {@code sharedMemory=off}. */
    static final Map<String, String> NETWORK_PATH = Map.of(NetworkOptions.SHARED_MEMORY_OPTION,
            NetworkOptions.SHARED_MEMORY_OFF);

    static List<Transport> open(int worldSize, Duration timeout) {
        return open(worldSize, timeout, Map.of());
    }

    /**
     * Reads {@code socket} until the rank closes the connection (end of stream, or a reset); fails
     * if the socket's read timeout runs out first, that is if the rank kept the connection open.
     */
    static void assertClosedByTheRank(Socket socket) throws IOException {
        try {
            while (socket.getInputStream().read(new byte[4096]) >= 0) {
                // the challenge, then the end
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the rank kept the connection open", e);
        } catch (IOException reset) {
            // a reset is a close too
        }
    }
}
