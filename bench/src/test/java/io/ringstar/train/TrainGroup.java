package io.ringstar.train;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.ranks.RankThreads;
import io.ringstar.transport.inproc.InProcessTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Runs one {@link Trainer} per rank as threads of this JVM over the in-process transport, as TrainCommand will. */
final class TrainGroup {
    private TrainGroup() {
    }

    /** What each rank's run returned or threw, by rank. */
    record Result(List<Trainer.Outcome> outcomes, List<Throwable> errors) {
        Trainer.Outcome rank(int rank) {
            if (errors.get(rank) != null) {
                throw new AssertionError("rank " + rank + " failed: " + errors.get(rank), errors.get(rank));
            }
            return outcomes.get(rank);
        }
    }

    /** One rank's run: its outcome, or what it threw instead. */
    private record Attempt(Trainer.Outcome outcome, Throwable error) {
    }

    /**
     * Runs every rank and waits for all of them, at most three timeouts (each rank's own waits are
     * bounded by one); a rank still running then fails the test with a RankFailureException naming it.
     */
    static Result run(int worldSize, Duration timeout, Trainer trainer) {
        return run(worldSize, timeout, Map.of(), trainer);
    }

    /** As {@link #run(int, Duration, Trainer)} with configuration options (such as {@code servers}) on every rank. */
    static Result run(int worldSize, Duration timeout, Map<String, String> options, Trainer trainer) {
        List<Transport> transports = InProcessTransport.createGroup(worldSize, timeout);
        List<Attempt> attempts;
        try (RankThreads threads = new RankThreads(worldSize)) {
            // RankThreads stops at the first rank that throws; the tests want every rank's outcome or
            // error (a failure's effect on the others is what some of them check), so no rank throws.
            attempts = threads.run(rank -> {
                Transport transport = transports.get(rank);
                try {
                    DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                            .timeout(timeout);
                    options.forEach(builder::option);
                    DistributedConfig config = builder.build();
                    return new Attempt(trainer.runWithParameters(config, transport), null);
                } catch (Throwable e) {
                    return new Attempt(null, e);
                } finally {
                    // As the command does: a rank that ends, well or not, closes its transport.
                    transport.close();
                }
            }, timeout.multipliedBy(3));
        }
        List<Trainer.Outcome> outcomes = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        for (Attempt attempt : attempts) {
            outcomes.add(attempt.outcome());
            errors.add(attempt.error());
        }
        return new Result(outcomes, errors);
    }
}
