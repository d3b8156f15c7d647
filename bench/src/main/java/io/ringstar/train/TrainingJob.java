package io.ringstar.train;

import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.NativeThreads;
import io.ringstar.ranks.RankFailureException;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.ranks.RankThreads;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code train} of the softmax or MLP model: one {@link Trainer} per algorithm, each training the
 * same model from the same start on this process's ranks, over transports opened once for all of
 * them. {@link #prepare} reads the data and checks everything it can before any connection.
 */
public final class TrainingJob {
    private final RankPlacement placement;
    private final List<Trainer> trainers;
    private final int steps;

    private TrainingJob(RankPlacement placement, List<Trainer> trainers, int steps) {
        this.placement = placement;
        this.trainers = List.copyOf(trainers);
        this.steps = steps;
    }

    /**
     * The job's trainers, one per algorithm in order, checked before any connection: the data is
     * read (once, for every algorithm), the batch split checked, and on rank 0's process the
     * checkpoint to resume from.
     *
     * @param out where rank 0 prints its progress
     * @throws IllegalArgumentException for settings that do not fit the data, the world size or the checkpoints
     * @throws UncheckedIOException for a data file that is missing or malformed
     */
    public static TrainingJob prepare(RankPlacement placement, TrainSettings settings, List<Algorithm> algorithms,
            CheckpointSettings checkpoints, OverlapSettings overlap, SlowRankSettings slow, PrintStream out) {
        int worldSize = placement.config().worldSize();
        int servers = AggregatorOptions.SERVERS.value(placement.config());
        List<Trainer> trainers = new ArrayList<>();
        for (Algorithm algorithm : algorithms) {
            // Every algorithm after the first trains on the first's data: it is read (or generated) once.
            Trainer trainer = trainers.isEmpty()
                    ? new Trainer(settings, algorithm, out, checkpoints).withOverlap(overlap).withSlowRank(slow)
                    : trainers.get(0).withAlgorithm(algorithm);
            trainer.validate(worldSize, servers);
            if (placement.isRankZero(0)) {
                // Rank 0 alone reads the checkpoints, so it alone can tell one of another run.
                trainer.checkResume(worldSize);
            }
            trainers.add(trainer);
        }
        return new TrainingJob(placement, trainers, settings.steps());
    }

    /**
     * Trains with each trainer in turn. Blocks until all have trained; every step of every rank is
     * bounded by the configuration's timeout.
     *
     * @throws RankFailureException when a rank fails
     */
    public void run(PrintStream out) {
        out.println("# config: " + placement.description() + "; ND4J threads " + NativeThreads.limitForRankThreads());
        out.flush();
        List<Transport> transports = List.of();
        try (RankThreads threads = new RankThreads(placement)) {
            transports = threads.openTransports(placement);
            List<Transport> opened = transports;
            // Every step of every rank is bounded by the timeout; this only guards against a bug in that.
            Duration limit = placement.config().timeout().multipliedBy(steps + 10L);
            for (Trainer trainer : trainers) {
                threads.runLending(opened, (local, transport) -> trainer.run(placement.configFor(local), transport),
                        limit);
                out.flush();
            }
        } finally {
            transports.forEach(Transport::close);
        }
    }
}
