package io.ringstar.testing;

import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.Transports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * Runs one body per rank, each with its own {@link Communicator}, under the watchdog of
 * {@link Ranks#run}: over a group of a {@link ReusedGroup} (for cases in which every call
 * completes on every rank) or over a group of its own (cases that fail a call, close a rank or
 * need another timeout). Every communicator is closed at the end.
 */
final class CommunicatorGroups implements AutoCloseable {
    /** Watchdog for each group of ranks. */
    static final Duration LIMIT = Duration.ofSeconds(60);
    /** The transports' and communicators' timeout in a reused group. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    private final BiFunction<Integer, Duration, List<Transport>> factory;
    private final ReusedGroup reused;
    private final Map<String, String> suiteOptions;

    /** What one rank does with its communicator. */
    @FunctionalInterface
    interface Body<T> {
        T run(int rank, Communicator communicator) throws Exception;
    }

    /** Groups from {@code factory}; every communicator gets {@code suiteOptions} before a case's own. */
    CommunicatorGroups(BiFunction<Integer, Duration, List<Transport>> factory, Map<String, String> suiteOptions) {
        this.factory = factory;
        this.reused = new ReusedGroup(factory, CALL_TIMEOUT);
        this.suiteOptions = suiteOptions;
    }

    /** Rank {@code rank}'s configuration with the suite's options, then {@code options}. */
    DistributedConfig config(int worldSize, int rank, Duration timeout, Map<String, String> options) {
        DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                .timeout(timeout);
        suiteOptions.forEach(builder::option);
        options.forEach(builder::option);
        return builder.build();
    }

    /**
     * Runs {@code body} over the reused group of {@code worldSize}; if any rank fails (or the
     * watchdog fires) the group is discarded, so that a bug shows in its own case only.
     */
    <T> List<Ranks.Outcome<T>> reused(int worldSize, Map<String, String> options, Body<T> body) {
        List<Transport> transports = reused.of(worldSize);
        List<Communicator> communicators = new ArrayList<>();
        boolean clean = false;
        try {
            for (int rank = 0; rank < worldSize; rank++) {
                communicators.add(new Communicator(config(worldSize, rank, CALL_TIMEOUT, options),
                        Transports.borrowed(transports.get(rank))));
            }
            List<Ranks.Outcome<T>> outcomes = Ranks.run(worldSize, LIMIT,
                    rank -> body.run(rank, communicators.get(rank)));
            clean = outcomes.stream().allMatch(outcome -> outcome.error == null);
            return outcomes;
        } finally {
            communicators.forEach(Communicator::close);
            if (!clean) {
                reused.discard();
            }
        }
    }

    /** Runs {@code body} over a group of its own, with {@code timeout} for the transports and communicators. */
    <T> List<Ranks.Outcome<T>> own(int worldSize, Duration timeout, Map<String, String> options, Body<T> body) {
        List<Transport> transports = factory.apply(worldSize, timeout);
        List<Communicator> communicators = new ArrayList<>();
        try {
            for (int rank = 0; rank < worldSize; rank++) {
                communicators.add(new Communicator(config(worldSize, rank, timeout, options), transports.get(rank)));
            }
            List<Ranks.Outcome<T>> outcomes = Ranks.run(worldSize, LIMIT,
                    rank -> body.run(rank, communicators.get(rank)));
            return outcomes;
        } finally {
            communicators.forEach(Communicator::close);
            Ranks.closeAll(transports);
        }
    }

    /** Discards the reused group: a case found it in doubt after its ranks returned (a wrong result, say). */
    void discardReused() {
        reused.discard();
    }

    @Override
    public void close() {
        reused.close();
    }
}
