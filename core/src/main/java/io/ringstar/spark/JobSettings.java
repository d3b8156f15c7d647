package io.ringstar.spark;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.NetworkOptions;
import io.ringstar.config.OptionCatalog;
import io.ringstar.config.OptionParser;
import java.io.Serializable;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What every rank of one {@link SparkRanks} job shares, made once on the driver and sent with the
 * stage: the world size, the job's id, the transport, the timeout and the options (with the secret
 * drawn for the job when the user gave none).
 */
final class JobSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    /** Option names of {@link SparkRanks#run}'s map that set the configuration's fields, not options. */
    static final String TRANSPORT = "transport";
    static final String TIMEOUT = "timeout";
    static final String DEFAULT_TRANSPORT = "netty";
    private static final OptionParser<Duration> DURATION = OptionParser.duration(ChronoUnit.SECONDS,
            Duration.ofSeconds(1), Duration.ofDays(7));
    private static final SecureRandom RANDOM = new SecureRandom();

    private final int worldSize;
    private final String jobId;
    private final String transport;
    private final Duration timeout;
    /** Sorted, so every rank builds the same configuration. */
    private final TreeMap<String, String> options;

    private JobSettings(int worldSize, String jobId, String transport, Duration timeout,
            TreeMap<String, String> options) {
        this.worldSize = worldSize;
        this.jobId = jobId;
        this.transport = transport;
        this.timeout = timeout;
        this.options = options;
    }

    /**
     * Reads the user's {@code options} for a job of {@code worldSize} ranks in application
     * {@code applicationId}, refusing a malformed value or an option the transport does not take
     * before anything starts.
     *
     * @throws InvalidConfigException naming the option
     */
    static JobSettings of(int worldSize, String applicationId, Map<String, String> userOptions) {
        TreeMap<String, String> options = new TreeMap<>(userOptions);
        options.forEach((name, value) -> {
            Objects.requireNonNull(name, "an option's name");
            Objects.requireNonNull(value, () -> "the value of option " + name);
        });
        String transport = options.containsKey(TRANSPORT) ? options.remove(TRANSPORT) : DEFAULT_TRANSPORT;
        Duration timeout = options.containsKey(TIMEOUT)
                ? timeout(options.remove(TIMEOUT)) : DistributedConfig.DEFAULT_TIMEOUT;
        // Also names the artifact to add when the transport is not on the class path.
        List<ConfigOption<?>> known = Transports.options(transport);
        boolean network = known.stream().anyMatch(option -> option.name().equals(NetworkOptions.SECRET_OPTION));
        String jobId = options.getOrDefault(NetworkOptions.JOB_ID_OPTION, newJobId(applicationId));
        if (network) {
            // The drawn id and secret are options only of a network transport; for another, a user's
            // jobId is refused below like any option it does not take.
            options.put(NetworkOptions.JOB_ID_OPTION, jobId);
            if (!options.containsKey(NetworkOptions.SECRET_OPTION)
                    && !options.containsKey(NetworkOptions.SECRET_FILE_OPTION)) {
                // Every job authenticated with no set-up; Spark's RPC (spark.authenticate, encryption)
                // protects the secret in transit.
                options.put(NetworkOptions.SECRET_OPTION, randomHex(32));
            }
        }
        JobSettings settings = new JobSettings(worldSize, jobId, transport, timeout, options);
        OptionCatalog.ofClassPath().requireKnown(settings.config(0, "127.0.0.1:1"), known);
        return settings;
    }

    private static Duration timeout(String text) {
        try {
            return DURATION.parse(text);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigException("option " + TIMEOUT, text, "must be " + DURATION.allowed(), "the options");
        }
    }

    private static String newJobId(String applicationId) {
        // Unique per job, so two jobs on one host (or one application) refuse each other's ranks.
        String application = applicationId == null ? "spark" : applicationId;
        if (application.length() > 200) {
            application = application.substring(0, 200);
        }
        return application + "-" + randomHex(8);
    }

    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        RANDOM.nextBytes(random);
        return HexFormat.of().formatHex(random);
    }

    /** Rank {@code rank}'s configuration, with the coordinator at {@code coordinatorAddr}. */
    DistributedConfig config(int rank, String coordinatorAddr) {
        DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                .coordinatorAddr(coordinatorAddr).transport(transport).timeout(timeout);
        options.forEach(builder::option);
        return builder.build();
    }

    int worldSize() {
        return worldSize;
    }

    String jobId() {
        return jobId;
    }

    String transport() {
        return transport;
    }

    Duration timeout() {
        return timeout;
    }

    /**
     * A port-like number that names this job's group, in {@code attempt} of its stage, for a
     * transport that binds nothing (the in-process one groups ranks by coordinator address): rank 0
     * reports no port of its own then. Drawn from the job's random id, so two jobs of one JVM
     * share a number only by a 1-in-65,535 chance (and then the in-process transport refuses the
     * second one's ranks, saying so); another attempt gets another number, so a retry does not meet
     * a task of the attempt before it.
     */
    int groupNumber(int attempt) {
        return 1 + Math.floorMod((jobId + "/" + attempt).hashCode(), 65_535);
    }
}
