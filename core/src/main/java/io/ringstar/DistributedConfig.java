package io.ringstar;

import io.ringstar.config.ConfigOption;
import io.ringstar.config.ConfigSources;
import io.ringstar.config.OptionParser;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Where this process stands in the job: its rank, the world size, how to reach rank 0, which
 * transport to use and how long any wait may last. Immutable; every value is checked when it is
 * built, so a bad value fails here with {@link InvalidConfigException} naming the field and the
 * value, before any connection is attempted.
 *
 * <pre>{@code
 * DistributedConfig config = DistributedConfig.builder()
 *         .worldSize(4).rank(1)
 *         .coordinatorAddr("10.0.0.1:29500")
 *         .transport("netty")
 *         .timeout(Duration.ofSeconds(30))
 *         .build();
 * }</pre>
 */
public final class DistributedConfig {
    /** Coordinator address used when none is given. */
    public static final String DEFAULT_COORDINATOR_ADDR = "127.0.0.1:29500";
    /** Transport used when none is given: ranks as threads of one JVM. */
    public static final String DEFAULT_TRANSPORT = "inproc";
    /** Upper bound of every blocking call when none is given. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);
    /**
     * Option that checksums every message of every collective: {@value #CHECKSUM_CRC32C}, or
     * {@value #CHECKSUM_NONE} (the default). With {@value #CHECKSUM_CRC32C} the sender writes the
     * CRC32C of each message's header and payload into its header and the receiver checks it before
     * it adds or copies a single element, so bytes that changed on the way fail the call with
     * {@link PayloadCorruptionException} instead of silently giving wrong numbers. Every rank must
     * give the same value: ranks that differ fail their first message to each other with
     * {@link CollectiveMismatchException}. It costs one CRC32C pass over each message on the
     * sending and on the receiving side.
     */
    public static final String CHECKSUM_OPTION = "checksum";
    /** Value of {@link #CHECKSUM_OPTION}: a CRC32C (Castagnoli) per message. */
    public static final String CHECKSUM_CRC32C = "crc32c";
    /** Value of {@link #CHECKSUM_OPTION}: no checksum, the default. */
    public static final String CHECKSUM_NONE = "none";

    private final int worldSize;
    private final int rank;
    private final String coordinatorAddr;
    private final String transport;
    private final Duration timeout;
    private final Map<String, String> options;

    private DistributedConfig(Builder builder) {
        this.worldSize = builder.worldSize;
        this.rank = builder.rank;
        this.coordinatorAddr = builder.coordinatorAddr;
        this.transport = builder.transport;
        this.timeout = builder.timeout;
        this.options = Collections.unmodifiableMap(new TreeMap<>(builder.options));
    }

    /** A configuration with the default transport and timeout. */
    public static DistributedConfig of(int worldSize, int rank, String coordinatorAddr) {
        return builder().worldSize(worldSize).rank(rank).coordinatorAddr(coordinatorAddr).build();
    }

    /**
     * A configuration from the environment variables a launcher sets (torchrun's {@code RANK},
     * {@code WORLD_SIZE}, {@code MASTER_ADDR}, {@code MASTER_PORT}; Open MPI's, Slurm's and PMI's
     * rank and size variables), as {@link ConfigSources} describes. The transport is
     * {@code RINGSTAR_TRANSPORT}, else {@value #DEFAULT_TRANSPORT}: set it for ranks that are
     * separate processes.
     *
     * @throws InvalidConfigException if a value is missing, malformed or given differently twice
     */
    public static DistributedConfig fromEnv(Map<String, String> env) {
        return ConfigSources.resolve(Map.of(), env, DEFAULT_TRANSPORT).config();
    }

    /**
     * A configuration from flags ({@code --rank R --world-size N --coordinator host:port --transport T
     * --timeout SECONDS}, the flag of any declared option such as {@code --secret-file PATH}, and
     * {@code --option name=value} for any declared option, as often as needed; each also as
     * {@code --name=value}), with what they leave out taken from this process's environment as in
     * {@link #fromEnv}.
     *
     * @throws InvalidConfigException for an unknown or repeated flag, a flag without a value, or any
     *     problem {@link ConfigSources#resolve} reports
     */
    public static DistributedConfig fromArgs(String... args) {
        List<String> known = ConfigSources.flags();
        Map<String, String> flags = new TreeMap<>();
        Map<String, String> options = new TreeMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String name = arg.startsWith("--") ? arg.substring(2) : arg;
            String value = null;
            int equals = name.indexOf('=');
            if (equals >= 0) {
                value = name.substring(equals + 1);
                name = name.substring(0, equals);
            }
            boolean option = name.equals(ConfigSources.OPTION);
            if (!arg.startsWith("--") || !(option || known.contains(name))) {
                throw new InvalidConfigException("argument", arg, "is not one of --" + String.join(", --", known)
                        + ", --" + ConfigSources.OPTION + " name=value");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new InvalidConfigException("--" + name, "(missing)", "needs a value");
                }
                value = args[++i];
            }
            if (option) {
                int split = value.indexOf('=');
                if (split <= 0) {
                    throw new InvalidConfigException("--" + name, value, "must be name=value");
                }
                name = value.substring(0, split);
                value = value.substring(split + 1);
            }
            if ((option ? options : flags).put(name, value) != null) {
                throw new InvalidConfigException(option ? "--option " + name : "--" + name, value,
                        "is given more than once");
            }
        }
        return ConfigSources.resolve(flags, options, System.getenv(), DEFAULT_TRANSPORT).config();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder that starts from this configuration's values. */
    public Builder toBuilder() {
        Builder builder = new Builder()
                .worldSize(worldSize)
                .rank(rank)
                .coordinatorAddr(coordinatorAddr)
                .transport(transport)
                .timeout(timeout);
        builder.options.putAll(options);
        return builder;
    }

    /** Number of ranks in the job, at least 1. */
    public int worldSize() {
        return worldSize;
    }

    /** This process's rank, in {@code [0, worldSize)}. */
    public int rank() {
        return rank;
    }

    /** {@code host:port} of rank 0 ({@code [v6addr]:port} for IPv6). */
    public String coordinatorAddr() {
        return coordinatorAddr;
    }

    /** Host part of {@link #coordinatorAddr()}, without IPv6 brackets. */
    public String coordinatorHost() {
        return splitHostPort(coordinatorAddr).host;
    }

    /** Port part of {@link #coordinatorAddr()}. */
    public int coordinatorPort() {
        return splitHostPort(coordinatorAddr).port;
    }

    /** Name of the transport that {@link Transports#open} looks up, for example {@code "inproc"}. */
    public String transport() {
        return transport;
    }

    /** Upper bound of every blocking call made with this configuration; positive. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Transport- or algorithm-specific settings, by name. Each must be an option that the transport
     * or core declares ({@link Transports#options(String)}): {@link Transports#open} and each
     * transport's constructor refuse any other, listing the known ones, and so does
     * {@link ConfigSources} for flags, variables and {@code --option}. Building a configuration does
     * not check them, since one configuration may be built before its transport is chosen.
     */
    public Map<String, String> options() {
        return options;
    }

    /** One option's value, if set. */
    public Optional<String> option(String name) {
        return Optional.ofNullable(options.get(name));
    }


    @Override
    public String toString() {
        return "DistributedConfig{worldSize=" + worldSize + ", rank=" + rank + ", coordinatorAddr=" + coordinatorAddr
                + ", transport=" + transport + ", timeout=" + timeout
                + (options.isEmpty() ? "" : ", options=" + printableOptions()) + '}';
    }

    /** The options with the value of any whose name mentions a secret hidden, so logs never carry one. */
    private Map<String, String> printableOptions() {
        Map<String, String> printable = new java.util.TreeMap<>();
        options.forEach((name, value) -> printable.put(name,
                name.toLowerCase(java.util.Locale.ROOT).contains("secret") && !name.toLowerCase(java.util.Locale.ROOT)
                        .endsWith("file") ? "(hidden)" : value));
        return printable;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof DistributedConfig)) {
            return false;
        }
        DistributedConfig that = (DistributedConfig) other;
        return worldSize == that.worldSize && rank == that.rank && coordinatorAddr.equals(that.coordinatorAddr)
                && transport.equals(that.transport) && timeout.equals(that.timeout) && options.equals(that.options);
    }

    @Override
    public int hashCode() {
        return Objects.hash(worldSize, rank, coordinatorAddr, transport, timeout, options);
    }

    private static final class HostPort {
        final String host;
        final int port;

        HostPort(String host, int port) {
            this.host = host;
            this.port = port;
        }
    }

    /** Splits {@code host:port} or {@code [v6]:port}; throws {@link InvalidConfigException} if malformed. */
    private static HostPort splitHostPort(String addr) {
        String requirement = "must be host:port (IPv6 as [address]:port) with a port in 0..65535";
        if (addr == null || addr.isBlank()) {
            throw new InvalidConfigException("coordinatorAddr", addr, requirement);
        }
        String host;
        String portText;
        if (addr.startsWith("[")) {
            int close = addr.indexOf(']');
            if (close < 2 || close + 1 >= addr.length() || addr.charAt(close + 1) != ':') {
                throw new InvalidConfigException("coordinatorAddr", addr, requirement);
            }
            host = addr.substring(1, close);
            portText = addr.substring(close + 2);
        } else {
            int colon = addr.lastIndexOf(':');
            if (colon <= 0 || addr.indexOf(':') != colon) {
                throw new InvalidConfigException("coordinatorAddr", addr, requirement);
            }
            host = addr.substring(0, colon);
            portText = addr.substring(colon + 1);
        }
        if (host.isBlank() || host.chars().anyMatch(Character::isWhitespace)) {
            throw new InvalidConfigException("coordinatorAddr", addr, requirement);
        }
        if (portText.isEmpty() || portText.length() > 5 || !portText.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new InvalidConfigException("coordinatorAddr", addr, requirement);
        }
        int port = Integer.parseInt(portText);
        if (port < 0 || port > 65535) {
            throw new InvalidConfigException("coordinatorAddr", addr, requirement);
        }
        return new HostPort(host, port);
    }

    /** Collects values; {@link #build()} checks them all. Not thread-safe. */
    public static final class Builder {
        private int worldSize = 1;
        private int rank = 0;
        private String coordinatorAddr = DEFAULT_COORDINATOR_ADDR;
        private String transport = DEFAULT_TRANSPORT;
        private Duration timeout = DEFAULT_TIMEOUT;
        private final Map<String, String> options = new TreeMap<>();

        private Builder() {
        }

        /** Number of ranks; default 1. */
        public Builder worldSize(int worldSize) {
            this.worldSize = worldSize;
            return this;
        }

        /** This process's rank; default 0. */
        public Builder rank(int rank) {
            this.rank = rank;
            return this;
        }

        /** {@code host:port} of rank 0; default {@value DistributedConfig#DEFAULT_COORDINATOR_ADDR}. */
        public Builder coordinatorAddr(String coordinatorAddr) {
            this.coordinatorAddr = coordinatorAddr;
            return this;
        }

        /** Transport name; default {@value DistributedConfig#DEFAULT_TRANSPORT}. */
        public Builder transport(String transport) {
            this.transport = transport;
            return this;
        }

        /** Upper bound of every blocking call; default 5 minutes. */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * Sets one named option, or removes it when {@code value} is null. The name is checked
         * against the transport's declared options when the transport opens (see
         * {@link DistributedConfig#options()}), not here.
         */
        public Builder option(String name, String value) {
            if (name == null || name.isBlank()) {
                throw new InvalidConfigException("option name", name, "must not be blank");
            }
            if (value == null) {
                options.remove(name);
            } else {
                options.put(name, value);
            }
            return this;
        }

        /**
         * Checks every value and builds the configuration.
         *
         * @throws InvalidConfigException naming the first field whose value is not allowed
         */
        public DistributedConfig build() {
            if (worldSize < 1) {
                throw new InvalidConfigException("worldSize", worldSize, "must be at least 1");
            }
            if (rank < 0 || rank >= worldSize) {
                throw new InvalidConfigException("rank", rank, "must be in [0, worldSize) = [0, " + worldSize + ")");
            }
            splitHostPort(coordinatorAddr);
            if (transport == null || transport.isBlank()) {
                throw new InvalidConfigException("transport", transport, "must name a transport, for example inproc");
            }
            if (timeout == null || timeout.isZero() || timeout.isNegative()) {
                throw new InvalidConfigException("timeout", timeout, "must be positive");
            }
            return new DistributedConfig(this);
        }
    }
}
