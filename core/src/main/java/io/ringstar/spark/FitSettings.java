package io.ringstar.spark;

import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.InvalidConfigException;
import io.ringstar.ParameterServer;
import io.ringstar.Transport;
import java.io.Serializable;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The options of {@link SparkDataParallel#fit} that are its own, not {@link SparkRanks}': the
 * aggregator and the checkpoints. Read on the driver, checked there before anything starts, and
 * sent to the ranks with the task.
 *
 * @param aggregator how the gradients are averaged
 * @param checkpointDir the folder of the checkpoints, or null for none
 * @param checkpointEvery a checkpoint after every this many steps (and after the last); 1 or more
 * @param resume whether a first attempt resumes from the newest checkpoint, too
 */
record FitSettings(Aggregator aggregator, String checkpointDir, int checkpointEvery, boolean resume)
        implements Serializable {
    private static final long serialVersionUID = 1L;
    static final String AGGREGATOR = "aggregator";
    static final String CHECKPOINT_DIR = "checkpointDir";
    static final String CHECKPOINT_EVERY = "checkpointEvery";
    static final String RESUME = "resume";
    /** Steps between checkpoints when {@value #CHECKPOINT_EVERY} is not given (as {@code train}'s). */
    static final int DEFAULT_CHECKPOINT_EVERY = 100;
    private static final Set<String> OWN = Set.of(AGGREGATOR, CHECKPOINT_DIR, CHECKPOINT_EVERY, RESUME);
    private static final String ORIGIN = "the options of SparkDataParallel.fit";

    /** The two ways of averaging the gradients. */
    enum Aggregator {
        /** {@link AllReduceAggregator}. */
        RING,
        /** {@link ParameterServer}, with its option {@value ParameterServer#SERVERS_OPTION}. */
        STAR;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The aggregator over {@code transport}, which it then owns (lend one with {@code Transports.borrowed}). */
        GradientAggregator create(DistributedConfig config, Transport transport) {
            return this == RING ? new AllReduceAggregator(config, transport) : new ParameterServer(config, transport);
        }
    }

    /**
     * Reads fit's own options from {@code options} (the others are left for {@link #rankOptions}).
     *
     * @throws InvalidConfigException naming the option whose value is refused
     */
    static FitSettings of(Map<String, String> options) {
        Objects.requireNonNull(options, "options");
        for (String name : OWN) {
            if (options.containsKey(name)) {
                Objects.requireNonNull(options.get(name), () -> "the value of option " + name);
            }
        }
        String aggregatorText = options.getOrDefault(AGGREGATOR, Aggregator.RING.label());
        Aggregator aggregator = switch (aggregatorText.trim().toLowerCase(Locale.ROOT)) {
            case "ring" -> Aggregator.RING;
            case "star" -> Aggregator.STAR;
            default -> throw new InvalidConfigException("option " + AGGREGATOR, aggregatorText,
                    "must be ring (the all-reduce) or star (the parameter server)", ORIGIN);
        };
        String directory = options.get(CHECKPOINT_DIR);
        if (directory != null && directory.isBlank()) {
            throw new InvalidConfigException("option " + CHECKPOINT_DIR, "''", "must name a folder that every"
                    + " executor sees", ORIGIN);
        }
        String everyText = options.get(CHECKPOINT_EVERY);
        int every = DEFAULT_CHECKPOINT_EVERY;
        if (everyText != null) {
            try {
                every = Integer.parseInt(everyText.trim());
            } catch (NumberFormatException e) {
                every = 0;
            }
            if (every < 1) {
                throw new InvalidConfigException("option " + CHECKPOINT_EVERY, everyText, "must be a whole number of"
                        + " steps from 1 up", ORIGIN);
            }
        }
        String resumeText = options.getOrDefault(RESUME, "false");
        boolean resume = switch (resumeText.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new InvalidConfigException("option " + RESUME, resumeText, "must be true or false",
                    ORIGIN);
        };
        if (directory == null && (everyText != null || resume)) {
            String given = everyText != null ? CHECKPOINT_EVERY : RESUME;
            throw new InvalidConfigException("option " + given, options.get(given), "needs option " + CHECKPOINT_DIR
                    + " (the folder of the checkpoints, one that every executor sees)", ORIGIN);
        }
        return new FitSettings(aggregator, directory, every, resume);
    }

    /** {@code options} without fit's own: what {@link SparkRanks#run} is given. */
    static Map<String, String> rankOptions(Map<String, String> options) {
        Map<String, String> rest = new TreeMap<>(options);
        rest.keySet().removeAll(OWN);
        return rest;
    }

    boolean checkpointing() {
        return checkpointDir != null;
    }
}
