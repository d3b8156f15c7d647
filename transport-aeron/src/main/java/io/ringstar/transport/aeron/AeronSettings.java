package io.ringstar.transport.aeron;

import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.ringstar.ConfigSources;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.spi.Frame;
import io.ringstar.spi.NetworkOptions;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * The Aeron transport's settings, read once from a {@link DistributedConfig}'s options and checked
 * before anything starts (as {@code Aeron.Context.conclude()} does): a bad value fails with
 * {@link InvalidConfigException} naming the option and the value. An option missing from the
 * configuration is looked up as the system property {@code ringstar.<name>} (for example
 * {@code -Dringstar.aeron.dir=/dev/shm/aeron-shared}), so launchers that cannot pass options,
 * such as the bench CLI, can still set them.
 *
 * @param externalDir the directory of a running media driver to use, or null for an embedded one
 * @param dirRoot where embedded drivers' directories go
 */
record AeronSettings(String jobId, byte[] secret, InetAddress coordinatorAddress, int coordinatorPort,
        InetAddress bindAddress, int port, String externalDir, Path dirRoot, ThreadingMode threading, String idle,
        int termLength, int mtu, int chunkBytes, long receiveBufferBytes, Duration liveness) {

    /** The largest UDP payload Aeron allows as an MTU; also used for IPC, where no network limits it. */
    static final int MAX_MTU = 65504;
    /** Aeron's default MTU, safe on any Ethernet path; used for UDP beyond loopback. */
    static final int NETWORK_MTU = 1408;
    static final int DEFAULT_TERM_LENGTH = 4 << 20;
    static final int MIN_RECEIVE_BUFFER_BYTES = NetworkOptions.MIN_RECEIVE_BUFFER_BYTES;

    static AeronSettings from(DistributedConfig config, Map<String, String> environment) {
        UnaryOperator<String> option = name -> config.option(name)
                .orElseGet(() -> System.getProperty("ringstar." + name));
        String jobId = NetworkOptions.jobId(option);
        byte[] secret = NetworkOptions.secret(option, environment);
        for (String tls : new String[] {ConfigSources.TLS_CERT_OPTION, ConfigSources.TLS_KEY_OPTION,
                ConfigSources.TLS_TRUST_OPTION}) {
            if (option.apply(tls) != null) {
                // Ignoring it would leave a user who asked for encryption with none.
                throw new InvalidConfigException("option " + tls, option.apply(tls), "is for the netty transport; the"
                        + " aeron transport has no TLS (use netty, or drop the TLS options)");
            }
        }
        InetAddress coordinator = NetworkOptions.resolve("coordinatorAddr", config.coordinatorHost());
        int coordinatorPort = config.coordinatorPort();
        if (coordinatorPort == 0 && config.worldSize() > 1) {
            throw new InvalidConfigException("coordinatorAddr", config.coordinatorAddr(),
                    "needs a fixed port, since every rank must find rank 0 there");
        }
        String bindText = option.apply(AeronTransport.BIND_OPTION);
        InetAddress bind = bindText != null ? NetworkOptions.bindAddress(bindText, coordinator)
                : config.rank() == 0 ? coordinator : NetworkOptions.routeTo(coordinator, coordinatorPort);
        if (bind.isAnyLocalAddress()) {
            throw new InvalidConfigException("option " + AeronTransport.BIND_OPTION, bindText,
                    "must be one address the other ranks can reach, not the wildcard");
        }
        int port = intIn(option, AeronTransport.PORT_OPTION, 0, 0, 65535);
        String externalDir = option.apply(AeronTransport.DIR_OPTION);
        if (externalDir != null && externalDir.isBlank()) {
            throw new InvalidConfigException("option " + AeronTransport.DIR_OPTION, externalDir,
                    "must name a media driver's directory");
        }
        String rootText = option.apply(AeronTransport.DIR_ROOT_OPTION);
        Path dirRoot = rootText != null ? Path.of(rootText) : defaultDirRoot();
        ThreadingMode threading = threading(option.apply(AeronTransport.THREADING_OPTION));
        String idle = orDefault(option.apply(AeronTransport.IDLE_OPTION), "backoff").trim().toLowerCase(Locale.ROOT);
        idleStrategy(idle);
        int termLength = intIn(option, AeronTransport.TERM_LENGTH_OPTION, DEFAULT_TERM_LENGTH,
                LogBufferDescriptor.TERM_MIN_LENGTH, LogBufferDescriptor.TERM_MAX_LENGTH);
        if (Integer.bitCount(termLength) != 1) {
            throw new InvalidConfigException("option " + AeronTransport.TERM_LENGTH_OPTION, termLength,
                    "must be a power of two");
        }
        boolean loopback = coordinator.isLoopbackAddress() && bind.isLoopbackAddress();
        int mtu = intIn(option, AeronTransport.MTU_OPTION, loopback ? MAX_MTU : NETWORK_MTU, 64, MAX_MTU);
        if (mtu % 32 != 0) {
            throw new InvalidConfigException("option " + AeronTransport.MTU_OPTION, mtu, "must be a multiple of 32");
        }
        // Aeron's longest message is an eighth of a term; a chunk must fit one message.
        int maxMessage = Math.min(termLength / 8, 16 << 20);
        int chunkBytes = intIn(option, AeronTransport.CHUNK_BYTES_OPTION, 0, Frame.HEADER_BYTES + 1, maxMessage);
        long receiveBuffer = intIn(option, AeronTransport.RECEIVE_BUFFER_OPTION,
                AeronTransport.DEFAULT_RECEIVE_BUFFER_BYTES, MIN_RECEIVE_BUFFER_BYTES, Integer.MAX_VALUE);
        // As long as the collective timeout by default: a pause shorter than it is survived, and a
        // death is noticed sooner anyway, by the sentinel connections. Aeron's client keep-alive
        // (every 500 ms) must fit well inside it.
        int defaultLiveness = (int) Math.max(MIN_LIVENESS_MILLIS, Math.min(3_600_000, config.timeout().toMillis()));
        int livenessMillis = intIn(option, AeronTransport.LIVENESS_OPTION, defaultLiveness, MIN_LIVENESS_MILLIS,
                3_600_000);
        return new AeronSettings(jobId, secret, coordinator, coordinatorPort, bind, port, externalDir, dirRoot, threading,
                idle, termLength, mtu, chunkBytes, receiveBuffer, Duration.ofMillis(livenessMillis));
    }

    /** A new idle strategy of the configured kind (strategies keep state, so each thread gets its own). */
    IdleStrategy newIdleStrategy() {
        return idleStrategy(idle);
    }

    /** The shortest liveness timeout: Aeron's clients say they are alive every 500 ms. */
    static final int MIN_LIVENESS_MILLIS = 2000;

    static IdleStrategy idleStrategy(String name) {
        return switch (name) {
            case "backoff" -> new BackoffIdleStrategy();
            case "sleep" -> new SleepingMillisIdleStrategy(1);
            case "yield" -> new YieldingIdleStrategy();
            case "spin" -> new BusySpinIdleStrategy();
            default -> throw new InvalidConfigException("option " + AeronTransport.IDLE_OPTION, name,
                    "must be backoff, sleep, yield or spin");
        };
    }

    private static ThreadingMode threading(String text) {
        if (text == null) {
            return ThreadingMode.SHARED;
        }
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "shared" -> ThreadingMode.SHARED;
            case "shared_network", "sharednetwork" -> ThreadingMode.SHARED_NETWORK;
            case "dedicated" -> ThreadingMode.DEDICATED;
            default -> throw new InvalidConfigException("option " + AeronTransport.THREADING_OPTION, text,
                    "must be shared, shared_network or dedicated");
        };
    }

    /** {@code /dev/shm} where it exists and is writable (memory, not disk), else the temporary directory. */
    private static Path defaultDirRoot() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    private static int intIn(UnaryOperator<String> option, String name, int defaultValue, int min, int max) {
        String text = option.apply(name);
        if (text == null) {
            return defaultValue;
        }
        try {
            long value = Long.parseLong(text.trim());
            if (value >= min && value <= max) {
                return (int) value;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new InvalidConfigException("option " + name, text, "must be an integer in [" + min + ", " + max + "]");
    }

    private static String orDefault(String value, String defaultValue) {
        return value == null ? defaultValue : value;
    }

    @Override
    public String toString() {
        return "AeronSettings{job=" + jobId + ", secret=" + (secret == null ? "none" : "(hidden)") + ", bind="
                + bindAddress.getHostAddress() + ", dir=" + (externalDir == null ? "embedded" : externalDir)
                + ", threading=" + threading + ", idle=" + idle + ", termLength=" + termLength + ", mtu=" + mtu + '}';
    }
}
