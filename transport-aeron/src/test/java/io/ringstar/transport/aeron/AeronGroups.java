package io.ringstar.transport.aeron;

import io.aeron.driver.MediaDriver;
import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.NetworkOptions;
import io.ringstar.testing.Ports;
import io.ringstar.testing.Ranks;
import io.ringstar.testing.SharedMemoryAssertions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.agrona.concurrent.BackoffIdleStrategy;

/**
 * Groups of {@link AeronTransport}s in one JVM: over UDP with a driver per rank, or over IPC through
 * one shared driver; and the term length and driver directories that the system tests use too.
 */
public final class AeronGroups {
    /** Small terms, so that many ranks' drivers fit in a test JVM and /dev/shm. */
    public static final int TEST_TERM_LENGTH = 256 << 10;

    private AeronGroups() {
    }

    /**
     * A configuration for {@code rank} of a group around {@code coordinator}, with extra options.
     * Without a shared driver ({@link AeronTransport#DIR_OPTION}) and unless the options say
     * otherwise, {@code sharedMemory=off}: the suites of UDP test the network path (its loss, its
     * flow control), those of IPC the shared-memory rings.
     */
    static DistributedConfig config(int worldSize, int rank, String coordinator, Duration timeout,
            Map<String, String> options) {
        DistributedConfig.Builder builder = DistributedConfig.builder()
                .worldSize(worldSize).rank(rank).coordinatorAddr(coordinator).transport(AeronTransport.NAME)
                .timeout(timeout)
                .option(AeronTransport.TERM_LENGTH_OPTION, Integer.toString(TEST_TERM_LENGTH));
        if (!options.containsKey(AeronTransport.DIR_OPTION)) {
            builder.option(NetworkOptions.SHARED_MEMORY_OPTION, NetworkOptions.SHARED_MEMORY_OFF);
        }
        options.forEach(builder::option);
        return builder.build();
    }

    /** Opens {@code worldSize} ranks at once on a fresh coordinator port; element r is rank r. */
    static List<Transport> open(int worldSize, Duration timeout, Map<String, String> options,
            UnaryOperator<MediaDriver.Context> driver) {
        String coordinator = "127.0.0.1:" + Ports.freeLoopbackPort();
        return Ranks.openAll(worldSize, timeout.plusSeconds(20),
                rank -> new AeronTransport(config(worldSize, rank, coordinator, timeout, options), driver));
    }

    /** Over UDP on loopback, each rank with its own embedded driver; the network path only (checked once). */
    static List<Transport> udp(int worldSize, Duration timeout) {
        return checked(open(worldSize, timeout, Map.of(), UnaryOperator.identity()), false);
    }

    /**
     * Ranks that share {@code shared}: their frames go through the shared-memory rings (checked
     * once), the IPC streams staying connected beside them.
     */
    static List<Transport> ipc(MediaDriver shared, int worldSize, Duration timeout) {
        Map<String, String> options = new HashMap<>();
        options.put(AeronTransport.DIR_OPTION, shared.aeronDirectoryName());
        return checked(open(worldSize, timeout, options, UnaryOperator.identity()), true);
    }

    /**
     * Ranks that share {@code shared} with option {@code sharedMemory=off}: their frames go through
     * the IPC term buffers (checked once), the data path the rings replace otherwise.
     */
    static List<Transport> ipcNetworkPath(MediaDriver shared, int worldSize, Duration timeout) {
        Map<String, String> options = new HashMap<>();
        options.put(AeronTransport.DIR_OPTION, shared.aeronDirectoryName());
        options.put(NetworkOptions.SHARED_MEMORY_OPTION, NetworkOptions.SHARED_MEMORY_OFF);
        return checked(open(worldSize, timeout, options, UnaryOperator.identity()), false);
    }

    private static List<Transport> checked(List<Transport> group, boolean sharedMemory) {
        try {
            if (sharedMemory) {
                SharedMemoryAssertions.assertAllPairsShareMemory(group);
            } else {
                SharedMemoryAssertions.assertNoPairSharesMemory(group);
            }
        } catch (AssertionError e) {
            group.forEach(Transport::close);
            throw e;
        }
        return group;
    }

    /** One embedded driver that a test class's ranks share, with the transport's defaults. */
    static MediaDriver launchShared(String name) {
        return MediaDriver.launch(DriverHandle.driverContext(driverDirectory(name).toString(),
                io.aeron.driver.ThreadingMode.SHARED, BackoffIdleStrategy::new, TEST_TERM_LENGTH,
                Duration.ofSeconds(5)));
    }

    /**
     * A directory for a media driver named {@code name} and this JVM's pid: under {@code /dev/shm}
     * (memory, not disk) where it exists and is writable, else under the temporary directory, as the
     * transport's own default root.
     */
    public static Path driverDirectory(String name) {
        Path shm = Path.of("/dev/shm");
        Path root = Files.isDirectory(shm) && Files.isWritable(shm) ? shm
                : Path.of(System.getProperty("java.io.tmpdir"));
        return root.resolve(name + "-" + ProcessHandle.current().pid());
    }
}
