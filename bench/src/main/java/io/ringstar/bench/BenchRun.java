package io.ringstar.bench;

import io.ringstar.ranks.NativeThreads;
import io.ringstar.ranks.RankFailureException;
import io.ringstar.ranks.RankPlacement;
import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The measurement of one {@code bench} run, whose settings the command line has checked: for each
 * transport in turn, this process's ranks form their group ({@link TransportSweep}), check that
 * every rank runs the same sweep, and measure every row ({@link SizeSweep}); rank 0 (or this
 * process, with threads) prints the table and writes the files ({@link BenchOutput}).
 */
public final class BenchRun {
    private BenchRun() {
    }

    /**
     * Runs the sweep. Blocks until every row is measured; each collective is bounded by the
     * settings' timeout, and a rank that fails stops the run.
     *
     * @param memoryMeters makes the meter of the run, which this method closes
     * @return 0 when every result was right and every file written, 1 otherwise
     * @throws RankFailureException when a rank fails (to join its group, or in a call)
     * @throws PlanMismatchException when the ranks were given different sweeps
     */
    public static int run(BenchSettings settings, Supplier<MemoryMeter> memoryMeters, PrintStream out,
            PrintStream err) {
        List<Long> sizes = settings.sizes();
        String nativeThreads = NativeThreads.limitForRankThreads();
        String date = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        boolean reports = settings.reports();
        ResultTable table = new ResultTable(out, settings.oneRankPerProcess());
        if (reports) {
            BenchOutput.printPreamble(out, settings, sizes, date, nativeThreads);
        }
        List<BenchRow> rows = new ArrayList<>();
        try (MemoryMeter memory = memoryMeters.get()) {
            for (RankPlacement placement : settings.placements()) {
                out.println("# config: " + placement.description());
                out.flush();
                try (TransportSweep sweep = TransportSweep.open(settings, placement, memory)) {
                    sweep.agreeOnPlan();
                    if (reports) {
                        table.printHeader();
                    }
                    SizeSweep.run(settings, sizes, sweep, reports ? table : null, rows);
                    if (reports) {
                        sweep.bufferBytes().forEach((algorithm, perRank) -> out.printf(Locale.ROOT,
                                "# %s over %s: off-heap bytes held between calls (bufferBytes), per local rank: %s%n",
                                algorithm.label(), sweep.transport(), perRank));
                    }
                }
            }
        }
        boolean written = !reports || BenchOutput.writeFiles(settings, date, nativeThreads, rows, out, err);
        long totalWrong = rows.stream().mapToLong(row -> Math.max(0, row.wrong())).sum();
        if (rows.stream().anyMatch(row -> row.wrong() < 0)) {
            out.println("# rows with #wrong -1 were not checked: top-k compression is lossy by design (its closed "
                    + "forms are checked by the library's tests)");
        }
        if (totalWrong > 0) {
            out.println("# FAILED" + (settings.oneRankPerProcess() ? " (seen from rank " + settings.rank() + ")" : "")
                    + ": " + totalWrong + " wrong elements (see #wrong)");
            return 1;
        }
        if (reports) {
            out.println("# all results right (#wrong 0" + (settings.oneRankPerProcess() ? " on every rank" : "") + ")");
        }
        return written ? 0 : 1;
    }
}
