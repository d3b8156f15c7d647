package io.ringstar.transport.aeron;

import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.NetworkOptions;
import io.ringstar.config.OptionParser;
import io.ringstar.spi.Frame;
import io.ringstar.spi.NetworkSettings;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * The Aeron transport's settings, read once from a {@link DistributedConfig}'s options and checked
 * before anything starts (as {@code Aeron.Context.conclude()} does): a bad value fails with
 * {@link InvalidConfigException} naming the option and the value. The options are declared here
 * ({@link #OPTIONS}, published by {@link AeronTransportProvider}); an option that neither they nor
 * core declare is refused, Netty's TLS options among them, so a user who asked for encryption is
 * never left without it. Options come from the configuration only (a command line passes them as
 * {@code --option name=value}).
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
    /** The shortest liveness timeout: Aeron's clients say they are alive every 500 ms. */
    static final int MIN_LIVENESS_MILLIS = 2000;
    /** The longest message Aeron takes, whatever the term length. */
    private static final int MAX_MESSAGE_BYTES = 16 << 20;

    /** Declares {@value AeronTransport#DIR_OPTION}. */
    static final ConfigOption<String> DIR = ConfigOption.builder(AeronTransport.DIR_OPTION, OptionParser.text()
                    .and(text -> !text.isBlank(), "not only white space").named("DIR"))
            .defaultText("none: an embedded driver")
            .description("directory of a running media driver to use instead of an embedded one (IPC between the"
                    + " ranks that share it)").build();
    /** Declares {@value AeronTransport#DIR_ROOT_OPTION}. */
    static final ConfigOption<Path> DIR_ROOT = ConfigOption.builder(AeronTransport.DIR_ROOT_OPTION, OptionParser.path())
            .defaultText("/dev/shm if writable, else java.io.tmpdir")
            .description("where embedded drivers' directories go").build();
    /** Declares {@value AeronTransport#THREADING_OPTION}. */
    static final ConfigOption<ThreadingMode> THREADING = ConfigOption.builder(AeronTransport.THREADING_OPTION,
                    OptionParser.choice(threadingModes()))
            .defaultValue(ThreadingMode.SHARED).defaultText("shared")
            .description("the embedded driver's threading mode").build();
    /** Declares {@value AeronTransport#IDLE_OPTION}. */
    static final ConfigOption<String> IDLE = ConfigOption.builder(AeronTransport.IDLE_OPTION,
                    OptionParser.choice("backoff", "sleep", "yield", "spin"))
            .defaultValue("backoff")
            .description("idle strategy of the embedded driver's threads and of waiting for the driver").build();
    /** Declares {@value AeronTransport#TERM_LENGTH_OPTION}. */
    static final ConfigOption<Integer> TERM_LENGTH = ConfigOption.builder(AeronTransport.TERM_LENGTH_OPTION,
                    OptionParser.byteSize(LogBufferDescriptor.TERM_MIN_LENGTH, LogBufferDescriptor.TERM_MAX_LENGTH)
                            .and(length -> Integer.bitCount(length) == 1, "a power of two"))
            .defaultValue(DEFAULT_TERM_LENGTH).defaultText("4M")
            .description("term length of every stream this rank publishes; a log holds 3 terms").build();
    /** Declares {@value AeronTransport#MTU_OPTION}. */
    static final ConfigOption<Integer> MTU = ConfigOption.builder(AeronTransport.MTU_OPTION,
                    OptionParser.byteSize(64, MAX_MTU).and(mtu -> mtu % 32 == 0, "a multiple of 32"))
            .defaultText(MAX_MTU + " when the coordinator and bind addresses are both loopback, else " + NETWORK_MTU)
            .description("UDP frame size (IPC uses " + MAX_MTU + "); capped at term length / 8").build();
    /** Declares {@value AeronTransport#CHUNK_BYTES_OPTION}. */
    static final ConfigOption<Integer> CHUNK_BYTES = ConfigOption.builder(AeronTransport.CHUNK_BYTES_OPTION,
                    OptionParser.byteSize(Frame.HEADER_BYTES + 1, MAX_MESSAGE_BYTES))
            .defaultText("one frame's payload")
            .description("bytes per Aeron message, at most term length / 8; above a frame's payload chunks go"
                    + " through offer").build();
    /** Declares {@value AeronTransport#LIVENESS_OPTION}. */
    static final ConfigOption<Duration> LIVENESS = ConfigOption.builder(AeronTransport.LIVENESS_OPTION,
                    OptionParser.duration(ChronoUnit.MILLIS, Duration.ofMillis(MIN_LIVENESS_MILLIS),
                            Duration.ofHours(1)))
            .defaultText("the configuration's timeout, from 2s to 1h")
            .description("silence after which a peer's stream counts as gone (the embedded driver's timeouts)")
            .build();
    /** Every option the Aeron transport reads: the network options, then its own. */
    static final List<ConfigOption<?>> OPTIONS = options();

    /** The settings for {@link AeronTransport#AeronTransport(DistributedConfig) opening}: rank 0 needs a fixed port. */
    static AeronSettings from(DistributedConfig config, Map<String, String> environment) {
        return read(config, environment, false);
    }

    /**
     * The settings for the first step of a two-step open ({@link AeronTransportProvider#bind}): rank 0
     * may be given port 0, and then listens on any free port.
     */
    static AeronSettings forBind(DistributedConfig config, Map<String, String> environment) {
        return read(config, environment, true);
    }

    private static AeronSettings read(DistributedConfig config, Map<String, String> environment,
            boolean rankZeroBindsFirst) {
        Transports.requireKnownOptions(config, OPTIONS);
        NetworkSettings network = rankZeroBindsFirst ? NetworkSettings.forBind(config, environment)
                : NetworkSettings.from(config, environment);
        String jobId = network.jobId();
        byte[] secret = network.secret();
        InetAddress coordinator = network.coordinator();
        int coordinatorPort = network.coordinatorPort();
        InetAddress bind = network.bind();
        if (bind.isAnyLocalAddress()) {
            throw NetworkOptions.BIND.refuse(network.bindSpec(), "must be one address the other ranks can reach,"
                    + " not the wildcard", ConfigOption.FROM_CONFIGURATION);
        }
        int port = network.port();
        String externalDir = DIR.ifSet(config).orElse(null);
        Path dirRoot = DIR_ROOT.ifSet(config).orElseGet(AeronSettings::defaultDirRoot);
        ThreadingMode threading = THREADING.value(config);
        String idle = IDLE.value(config);
        int termLength = TERM_LENGTH.value(config);
        boolean loopback = coordinator.isLoopbackAddress() && bind.isLoopbackAddress();
        int mtu = MTU.valueOr(config, loopback ? MAX_MTU : NETWORK_MTU);
        // Aeron's longest message is an eighth of a term; a chunk must fit one message.
        int maxMessage = Math.min(termLength / 8, MAX_MESSAGE_BYTES);
        int chunkBytes = CHUNK_BYTES.valueOr(config, 0);
        if (chunkBytes > maxMessage) {
            throw CHUNK_BYTES.refuse(config.option(AeronTransport.CHUNK_BYTES_OPTION).orElseThrow(), "must be at most"
                    + " term length / 8 = " + maxMessage, ConfigOption.FROM_CONFIGURATION);
        }
        long receiveBuffer = network.receiveBufferBytes();
        // As long as the collective timeout by default: a pause shorter than it is survived, and a
        // death is noticed sooner anyway, by the sentinel connections. Aeron's client keep-alive
        // (every 500 ms) must fit well inside it.
        long defaultLiveness = Math.max(MIN_LIVENESS_MILLIS, Math.min(3_600_000, config.timeout().toMillis()));
        Duration liveness = LIVENESS.valueOr(config, Duration.ofMillis(defaultLiveness));
        return new AeronSettings(jobId, secret, coordinator, coordinatorPort, bind, port, externalDir, dirRoot,
                threading, idle, termLength, mtu, chunkBytes, receiveBuffer, liveness);
    }

    /** A new idle strategy of the configured kind (strategies keep state, so each thread gets its own). */
    IdleStrategy newIdleStrategy() {
        return idleStrategy(idle);
    }

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

    private static Map<String, ThreadingMode> threadingModes() {
        Map<String, ThreadingMode> modes = new LinkedHashMap<>();
        modes.put("shared", ThreadingMode.SHARED);
        modes.put("shared_network", ThreadingMode.SHARED_NETWORK);
        modes.put("sharednetwork", ThreadingMode.SHARED_NETWORK);
        modes.put("dedicated", ThreadingMode.DEDICATED);
        return modes;
    }

    private static List<ConfigOption<?>> options() {
        List<ConfigOption<?>> options = new ArrayList<>(NetworkOptions.ALL);
        options.addAll(List.of(DIR, DIR_ROOT, THREADING, IDLE, TERM_LENGTH, MTU, CHUNK_BYTES, LIVENESS));
        return List.copyOf(options);
    }

    /** {@code /dev/shm} where it exists and is writable (memory, not disk), else the temporary directory. */
    private static Path defaultDirRoot() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    @Override
    public String toString() {
        return "AeronSettings{job=" + jobId + ", secret=" + (secret == null ? "none" : "(hidden)") + ", bind="
                + bindAddress.getHostAddress() + ", dir=" + (externalDir == null ? "embedded" : externalDir)
                + ", threading=" + threading + ", idle=" + idle + ", termLength=" + termLength + ", mtu=" + mtu + '}';
    }
}
