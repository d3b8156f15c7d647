package io.ringstar.train.convnet;

import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.ranks.NativeThreads;
import io.ringstar.ranks.RankFailureException;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.ranks.RankThreads;
import io.ringstar.train.TrainSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code train --model convnet}: opens this process's ranks' transports once, runs
 * {@link ConvNetTrainer} for each chosen run (ps, ring, async), and with a plot draws what rank 0
 * collected. The process that hosts rank 0 first says where the images come from.
 */
public final class ConvNetJob {
    private final RankPlacement placement;
    private final TrainSettings settings;
    private final List<ConvNetRun> runs;
    private final Path plot;
    private final ConvNetTrainer trainer;

    /**
     * The job; nothing is read or opened yet.
     *
     * @param runs the runs, in order, each from the same start
     * @param plot the PNG to draw the held-out accuracy into (rank 0's process), or {@code null}
     * @param out where rank 0 prints its progress
     */
    public ConvNetJob(RankPlacement placement, TrainSettings settings, List<ConvNetRun> runs, Path plot,
            PrintStream out) {
        this.placement = placement;
        this.settings = settings;
        this.runs = List.copyOf(runs);
        this.plot = plot;
        this.trainer = new ConvNetTrainer(settings, out);
    }

    /**
     * Reads the images and checks the batch split, so that a bad flag or file stops the job before
     * it connects.
     *
     * @throws IllegalArgumentException for settings that do not fit the data or the world size
     * @throws UncheckedIOException for images that are missing or malformed
     */
    public void validate() {
        trainer.validate(placement.config().worldSize(), AggregatorOptions.SERVERS.value(placement.config()), runs);
    }

    /**
     * Runs every run on this process's ranks, then draws the plot. Blocks until all have trained;
     * every step of every rank is bounded by the configuration's timeout.
     *
     * @throws RankFailureException when a rank fails
     * @throws IOException when the plot cannot be written (the runs have trained)
     */
    public void run(PrintStream out) throws IOException {
        int worldSize = placement.config().worldSize();
        boolean hostsRankZero = placement.isRankZero(0);
        if (hostsRankZero) {
            out.println("# data: " + trainer.data().description());
        }
        out.println("# config: " + placement.description() + "; ND4J threads " + NativeThreads.limitForRankThreads());
        out.flush();
        List<AccuracyCurve> curves = new ArrayList<>();
        List<Transport> transports = List.of();
        try (RankThreads threads = new RankThreads(placement)) {
            transports = threads.openTransports(placement);
            List<Transport> opened = transports;
            // Every step of every rank is bounded by the timeout; this only guards against a bug in that.
            Duration limit = placement.config().timeout().multipliedBy(settings.steps() + 10L);
            for (ConvNetRun convNetRun : runs) {
                List<ConvNetOutcome> outcomes = threads.runLending(opened,
                        (local, transport) -> trainer.run(convNetRun, placement.configFor(local), transport), limit);
                out.flush();
                if (hostsRankZero && outcomes.get(0).curve() != null) {
                    curves.add(outcomes.get(0).curve());
                }
            }
        } finally {
            transports.forEach(Transport::close);
        }
        if (plot != null && hostsRankZero) {
            AccuracyChart.write(plot, "convnet on " + trainer.data().name() + ", " + worldSize + " rank"
                    + (worldSize == 1 ? "" : "s") + ": held-out accuracy", curves);
            out.println("plot: " + plot + " (held-out accuracy against training seconds, one line per run)");
        }
    }
}
