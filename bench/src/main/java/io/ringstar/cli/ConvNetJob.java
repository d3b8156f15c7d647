package io.ringstar.cli;

import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.NativeThreads;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.ranks.RankThreads;
import io.ringstar.train.TrainSettings;
import io.ringstar.train.convnet.AccuracyChart;
import io.ringstar.train.convnet.AccuracyCurve;
import io.ringstar.train.convnet.ConvNetOutcome;
import io.ringstar.train.convnet.ConvNetRun;
import io.ringstar.train.convnet.ConvNetTrainer;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code train --model convnet}: places the ranks as {@link TrainCommand} does, opens their transports
 * once, runs {@link ConvNetTrainer} for each chosen run (ps, ring, async: {@code --algorithm all}, the
 * default), and with {@code --plot} draws what rank 0 collected. The process that hosts rank 0 first
 * says where the images come from.
 */
final class ConvNetJob {
    /** The value of {@code --algorithm} that picks all three runs: ps and ring in step, then the async server. */
    static final String ALL = "all";

    private final RankPlacement placement;
    private final TrainSettings settings;
    private final List<ConvNetRun> runs;
    private final Path plot;

    private ConvNetJob(RankPlacement placement, TrainSettings settings, List<ConvNetRun> runs, Path plot) {
        this.placement = placement;
        this.settings = settings;
        this.runs = runs;
        this.plot = plot;
    }

    /**
     * The job for these flags: {@code algorithm} is {@code --algorithm}'s value or {@code null}.
     *
     * With one rank, {@code all} is ps and ring (the asynchronous server needs a server and a worker).
     *
     * @throws UsageException for an algorithm other than ps, ring, both or all, more than ps with async mode,
     *     or async mode with one rank
     */
    static ConvNetJob of(RankPlacement placement, TrainSettings settings, String algorithm, Path plot)
            throws UsageException {
        boolean async = settings.mode() == TrainSettings.Mode.ASYNC;
        boolean alone = placement.config().worldSize() == 1;
        if (async && alone) {
            throw new UsageException("--mode async needs at least 2 ranks: a server and a worker");
        }
        String choice = FlagValues.choice(Algorithm.FLAG, algorithm, async ? Algorithm.PS.label() : ALL,
                List.of(Algorithm.PS.label(), Algorithm.RING.label(), Algorithm.BOTH, ALL));
        List<ConvNetRun> runs = switch (choice) {
            // One rank has no one to serve it: all is then ps and ring, rather than a third run labelled async.
            case ALL -> alone ? List.of(ConvNetRun.PS, ConvNetRun.RING)
                    : List.of(ConvNetRun.PS, ConvNetRun.RING, ConvNetRun.ASYNC);
            case Algorithm.BOTH -> List.of(ConvNetRun.PS, ConvNetRun.RING);
            case "ring" -> List.of(ConvNetRun.RING);
            default -> List.of(async ? ConvNetRun.ASYNC : ConvNetRun.PS);
        };
        if (async && !runs.equals(List.of(ConvNetRun.ASYNC))) {
            throw new UsageException("--mode async is the parameter server's alone (--algorithm ps); --algorithm "
                    + ALL + " (without --mode) runs ps, ring and then ps async");
        }
        return new ConvNetJob(placement, settings, runs, plot);
    }

    /** Runs every chosen run on this process's ranks; 0 when all trained, 1 when a rank failed. */
    int run(PrintStream out, PrintStream err) throws UsageException {
        ConvNetTrainer trainer = new ConvNetTrainer(settings, out);
        int worldSize = placement.config().worldSize();
        try {
            // Reads the images and checks the batch split now, so a bad flag or file stops us before connecting.
            trainer.validate(worldSize, AggregatorOptions.SERVERS.value(placement.config()), runs);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            throw new UsageException(e.getMessage());
        }
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
            try {
                AccuracyChart.write(plot, "convnet on " + trainer.data().name() + ", " + worldSize + " rank"
                        + (worldSize == 1 ? "" : "s") + ": held-out accuracy", curves);
            } catch (IOException e) {
                err.println(Main.PROGRAM + " train: cannot write the plot " + plot + ": " + e.getMessage());
                return 1;
            }
            out.println("plot: " + plot + " (held-out accuracy against training seconds, one line per run)");
        }
        return 0;
    }
}
