package io.ringstar.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The report's "What limits each number": memory bandwidth (JMH's copy against the in-process ring),
 * cores (Open MPI's shared-memory all-reduce), the emulated link (the ring's share of it) and the
 * spread of p99 over p50. Each item is written only when its inputs exist.
 */
public final class LimitsSection {
    private static final Pattern COPY = Pattern.compile("ReductionBenchmark\\.copy:bytes");
    private static final Pattern ADD_FLOAT = Pattern.compile("ReductionBenchmark\\.addFloat:bytes");

    private LimitsSection() {
    }

    /** The section's items, each line ending with a line feed. */
    public static String render(ReportInputs inputs) {
        RunRecord run = inputs.run();
        StringBuilder text = new StringBuilder();
        double[] copy = JmhTable.bytesPerSecond(inputs.jmh().orElse(List.of()), COPY);
        Optional<ResultRow> inproc = largest(inputs.sweepRows(), row -> row.transport().equals("inproc")
                && row.algorithm().equals("ring") && row.op().equals("reduce") && row.type().equals("float"));
        if (copy != null && inproc.isPresent()) {
            double[] add = JmhTable.bytesPerSecond(inputs.jmh().orElse(List.of()), ADD_FLOAT);
            String copyGbps = Numbers.fixed(copy[0], 2);
            double ringGbps = inproc.get().busbwGbps();
            text.append("- **Copies and memory bandwidth.** One thread copied a ")
                    .append(Numbers.bytesLabel((long) copy[1])).append(" buffer at ").append(copyGbps).append(" GB/s\n")
                    .append("  and added floats into one at ").append(add == null ? "?" : Numbers.fixed(add[0], 2))
                    .append(" GB/s (JMH, ReductionBenchmark). The ring in one JVM\n")
                    .append("  (inproc, no network) reached a busbw of ").append(Numbers.fixed(ringGbps, 2))
                    .append(" GB/s at ").append(Numbers.bytesLabel(inproc.get().sizeBytes())).append(",\n  ")
                    // The share is of the copy speed as shown, rounded to 2 decimals.
                    .append(Numbers.significant(ringGbps / Double.parseDouble(copyGbps), 2))
                    .append("× that copy speed. In-process ranks share no wire, so that time is their own work on\n")
                    .append("  shared cores: reading the inputs, the transport's copies, the additions, creating the\n")
                    .append("  result arrays, and waiting for one another.\n");
        }
        String[] compareSizes = run.compareWorldSizes().split(",");
        text.append("- **Cores.** This machine has ").append(inputs.machine().cores()).append(" cores. The sweep runs ")
                .append(run.worldSize()).append(" ranks, compare-mpi.sh up to\n  ")
                .append(compareSizes[compareSizes.length - 1])
                .append(" processes (plus a media driver for Aeron IPC), all on those cores; load\n")
                .append("  before the run: ").append(run.loadBefore()).append(".\n");
        if (inputs.compare().isPresent()) {
            text.append(sharedMemory(inputs.compare().get(), run, compareSizes));
        }
        if (inputs.cluster().isPresent()) {
            text.append("- **The emulated link.** Every link was shaped to ").append(run.rate())
                    .append(" each way. At the largest size the\n")
                    .append("  ring's busbw (what each rank sent per second, ×8 for bits) was:\n  ")
                    .append(linkUse(inputs.cluster().get())).append(".\n");
        }
        text.append(tail(inputs.sweepRows()));
        return text.toString();
    }

    /** Open MPI's shared-memory all-reduce at its largest size, per world size of compare-mpi.sh. */
    private static String sharedMemory(List<ResultRow> compare, RunRecord run, String[] worldSizes) {
        List<String> parts = new ArrayList<>();
        for (String n : worldSizes) {
            largest(compare, row -> row.transport().equals("mpi-shm") && row.algorithm().equals("mpi")
                    && row.op().equals("reduce") && row.type().equals(run.compareType())
                    && Integer.toString(row.worldSize()).equals(n.strip()))
                    .ifPresent(row -> parts.add(Numbers.fixed(row.busbwGbps(), 2) + " GB/s at n=" + n.strip()));
        }
        long size = largest(compare, row -> row.transport().equals("mpi-shm")).map(ResultRow::sizeBytes).orElse(0L);
        return "  Open MPI's shared-memory MPI_Allreduce at " + Numbers.bytesLabel(size) + " (" + run.compareType()
                + "), busbw:" + (parts.isEmpty() ? "" : " " + String.join(", ", parts)) + ".\n";
    }

    /** "0.93 Gbit/s at n=2, ...": the ring's busbw in Gbit/s at its largest size, per world size. */
    static String linkUse(List<ResultRow> cluster) {
        List<String> parts = new ArrayList<>();
        cluster.stream().filter(row -> row.algorithm().equals("ring")).map(ResultRow::worldSize).distinct().sorted()
                .forEach(n -> largest(cluster, row -> row.algorithm().equals("ring") && row.worldSize() == n)
                        .ifPresent(row -> parts.add(Numbers.fixed(row.busbwGbps() * 8, 2) + " Gbit/s at n=" + n)));
        return String.join(", ", parts);
    }

    /** The p99 ÷ p50 item: median and maximum over the sweep's rows, and the first row with the maximum. */
    static String tail(List<ResultRow> sweep) {
        List<ResultRow> timed = sweep.stream().filter(row -> row.p50Micros() > 0).toList();
        if (timed.isEmpty()) {
            return "";
        }
        List<Double> ratios = timed.stream().map(LimitsSection::spread).sorted().toList();
        ResultRow worst = timed.get(0);
        for (ResultRow row : timed) {
            if (spread(row) > spread(worst)) {
                worst = row;
            }
        }
        String where = String.join(" ", worst.transport(), worst.algorithm(), worst.op(), worst.type(), "at",
                Long.toString(worst.sizeBytes()), "B");
        return """
                - **JIT, garbage collection and scheduling.** Timed calls follow untimed warm-up calls, but
                  a call that waits for a compilation, a collection or a core shows in p99. Over the sweep's
                  %d rows, p99 ÷ p50 has median %s and maximum %s (%s).
                """.formatted(timed.size(), Numbers.fixed(ratios.get((timed.size() - 1) / 2), 2),
                Numbers.fixed(spread(worst), 2), where);
    }

    private static double spread(ResultRow row) {
        return row.p99Micros() / row.p50Micros();
    }

    /** The row with the largest size among those {@code filter} accepts; the last of equal sizes. */
    static Optional<ResultRow> largest(List<ResultRow> rows, Predicate<ResultRow> filter) {
        ResultRow best = null;
        for (ResultRow row : rows) {
            if (filter.test(row) && row.sizeBytes() > 0 && (best == null || row.sizeBytes() >= best.sizeBytes())) {
                best = row;
            }
        }
        return Optional.ofNullable(best);
    }
}
