package io.ringstar.bench.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Issue 28's targets against Open MPI, each with what compare-mpi.sh's CSV measured and whether it
 * is met: a table to paste into BENCHMARKS.md and the note. Float rows only, as the targets
 * are stated. A target over a range of sizes is as good as its worst size there, which the table
 * names; one at 1 KiB compares the median times. Targets that compare-mpi.sh does not measure (the
 * emulated cluster, allocation per call, an idle rank's CPU) are not here.
 */
public final class TargetsTable {
    /** No upper end to a target's sizes: up to the largest the file has. */
    private static final long LARGEST = Long.MAX_VALUE;
    private static final long KIB = 1024;
    private static final long MIB = KIB * KIB;
    private static final String TYPE = "float";
    private static final String ONE_HOST = "one host, default options ÷ Open MPI shm";
    private static final String TCP = "TCP (sharedMemory=off) ÷ Open MPI TCP";
    private static final String ALL_REDUCE = "Communicator.allReduce";
    private static final String REDUCE_INTO = "reduceGradientsInto";
    private static final String REDUCE = "reduceGradients";
    /** Gloo's busbw as a share of Open MPI TCP's at 2 ranks, as issue 28 quotes it (not measured by the script). */
    private static final long[] GLOO_SIZES = {KIB, MIB, 16 * MIB, 64 * MIB};
    private static final double[] GLOO_SHARES = {0.17, 0.52, 0.73, 1.33};

    /** What a target bounds. */
    enum Kind {
        /** ringstar's busbw ÷ Open MPI's, at least the bound at every size of the range. */
        BUSBW_AT_LEAST,
        /** ringstar's median time ÷ Open MPI's, at most the bound at every size of the range. */
        TIME_AT_MOST
    }

    /**
     * One target.
     *
     * @param worldSize the ranks it is stated for
     * @param path how the ranks talk, for people
     * @param call the API call, for people
     * @param algorithm ringstar's algorithm label in the CSV ({@code comm}, {@code ring})
     * @param op ringstar's op label
     * @param transport ringstar's transport label
     * @param mpiAlgorithm Open MPI's algorithm label
     * @param mpiOp Open MPI's op label
     * @param mpiTransport Open MPI's transport label
     * @param fromBytes the smallest size it holds at
     * @param toBytes the largest, or {@link #LARGEST}
     * @param kind what it bounds
     * @param bound the bound
     */
    record Target(int worldSize, String path, String call, String algorithm, String op, String transport,
            String mpiAlgorithm, String mpiOp, String mpiTransport, long fromBytes, long toBytes, Kind kind,
            double bound) {
        String sizes() {
            if (fromBytes == toBytes) {
                return "at " + Numbers.bytesLabel(fromBytes);
            }
            return toBytes == LARGEST ? "from " + Numbers.bytesLabel(fromBytes)
                    : Numbers.bytesLabel(fromBytes) + " to " + Numbers.bytesLabel(toBytes);
        }

        String goal() {
            String bound = Numbers.significant(this.bound, 3);
            return kind == Kind.BUSBW_AT_LEAST ? "busbw ≥ " + bound + "×" : "time ≤ " + bound + "×";
        }
    }

    /** Issue 28's targets, in the order. */
    static final List<Target> TARGETS = targets();

    private TargetsTable() {
    }

    private static List<Target> targets() {
        List<Target> targets = new ArrayList<>();
        // One host, default options, against Open MPI's shared memory, at 2 ranks.
        for (String[] call : new String[][] {{ALL_REDUCE, "comm", "allreduce"}, {REDUCE_INTO, "ring", "reduceinto"}}) {
            targets.add(target(2, ONE_HOST, call, "netty", "mpi-shm", 64 * KIB, 64 * MIB, Kind.BUSBW_AT_LEAST, 0.9));
            targets.add(target(2, ONE_HOST, call, "netty", "mpi-shm", KIB, KIB, Kind.TIME_AT_MOST, 2));
        }
        String[] reduce = {REDUCE, "ring", "reduce"};
        targets.add(target(2, ONE_HOST, reduce, "netty", "mpi-shm", 64 * KIB, LARGEST, Kind.BUSBW_AT_LEAST, 0.8));
        // TCP against Open MPI's TCP, at 2 ranks.
        String[] allReduce = {ALL_REDUCE, "comm", "allreduce"};
        for (long size : new long[] {MIB, 16 * MIB, 64 * MIB}) {
            targets.add(target(2, TCP, allReduce, "netty-tcp", "mpi-tcp", size, size, Kind.BUSBW_AT_LEAST, 1.0));
        }
        targets.add(target(2, TCP, allReduce, "netty-tcp", "mpi-tcp", KIB, KIB, Kind.TIME_AT_MOST, 2));
        targets.add(target(2, TCP, reduce, "netty-tcp", "mpi-tcp", MIB, LARGEST, Kind.BUSBW_AT_LEAST, 0.8));
        targets.add(target(2, TCP, reduce, "netty-tcp", "mpi-tcp", KIB, KIB, Kind.TIME_AT_MOST, 3));
        // 4 ranks on 2 cores: nothing collapses, on both paths.
        for (String[] call : new String[][] {allReduce, {REDUCE_INTO, "ring", "reduceinto"}, reduce}) {
            targets.add(target(4, ONE_HOST, call, "netty", "mpi-shm", 64 * KIB, LARGEST, Kind.BUSBW_AT_LEAST, 0.7));
            targets.add(target(4, TCP, call, "netty-tcp", "mpi-tcp", 64 * KIB, LARGEST, Kind.BUSBW_AT_LEAST, 0.7));
        }
        // Ahead of Gloo: its share of Open MPI TCP as the issue quotes it, so ringstar's must be above it.
        for (int i = 0; i < GLOO_SIZES.length; i++) {
            targets.add(target(2, TCP + " (ahead of Gloo)", allReduce, "netty-tcp", "mpi-tcp", GLOO_SIZES[i],
                    GLOO_SIZES[i], Kind.BUSBW_AT_LEAST, GLOO_SHARES[i]));
        }
        return List.copyOf(targets);
    }

    /** A target of {@code call} = {its name, ringstar's algorithm, op}, against MPI_Allreduce. */
    private static Target target(int worldSize, String path, String[] call, String transport, String mpiTransport,
            long from, long to, Kind kind, double bound) {
        return new Target(worldSize, path, call[0], call[1], call[2], transport, "mpi", "reduce", mpiTransport, from,
                to, kind, bound);
    }

    /**
     * The targets table after a blank line and a bold title, a row per target whose world size the
     * rows have; the empty string when they have none of those world sizes in float.
     */
    public static String render(List<ResultRow> rows) {
        Map<String, ResultRow> byKey = new HashMap<>();
        TreeSet<Integer> worldSizes = new TreeSet<>();
        for (ResultRow row : rows) {
            if (row.type().equals(TYPE)) {
                byKey.put(key(row.worldSize(), MpiRatioTables.sizeRow(row.sizeBytes()), row.algorithm(), row.op(),
                        row.transport()), row);
                worldSizes.add(row.worldSize());
            }
        }
        MarkdownTable table = new MarkdownTable(List.of("ranks", "path", "call", "sizes", "target", "measured",
                "met"), List.of(true, false, false, false, false, false, false));
        boolean any = false;
        for (Target target : TARGETS) {
            if (!worldSizes.contains(target.worldSize())) {
                continue;
            }
            any = true;
            String[] outcome = outcome(target, byKey);
            table.add(List.of(Integer.toString(target.worldSize()), target.path(), target.call(), target.sizes(),
                    target.goal(), outcome[0], outcome[1]));
        }
        if (!any) {
            return "";
        }
        return "\n**Issue 28's targets** (float; ringstar ÷ Open MPI in this file; a range is as good as its worst"
                + " size; Gloo's shares of Open MPI TCP are the issue's, not measured here)\n\n" + table.render();
    }

    /** What the rows say about {@code target}: the measured cell and yes, no or "no data". */
    static String[] outcome(Target target, Map<String, ResultRow> byKey) {
        String worst = null;
        double worstRatio = Double.NaN;
        int sizes = 0;
        boolean wrong = false;
        TreeSet<Long> candidates = new TreeSet<>();
        byKey.values().forEach(row -> candidates.add(MpiRatioTables.sizeRow(row.sizeBytes())));
        for (long size : candidates.subSet(target.fromBytes(), true, target.toBytes(), true)) {
            ResultRow ringstar = byKey.get(key(target.worldSize(), size, target.algorithm(), target.op(),
                    target.transport()));
            ResultRow mpi = byKey.get(key(target.worldSize(), size, target.mpiAlgorithm(), target.mpiOp(),
                    target.mpiTransport()));
            if (ringstar == null || mpi == null) {
                continue;
            }
            if (ringstar.isWrong() || mpi.isWrong()) {
                wrong = true;
                continue;
            }
            double ratio = target.kind() == Kind.BUSBW_AT_LEAST
                    ? (mpi.busbwGbps() > 0 ? ringstar.busbwGbps() / mpi.busbwGbps() : Double.NaN)
                    : (mpi.p50Micros() > 0 ? ringstar.p50Micros() / mpi.p50Micros() : Double.NaN);
            if (Double.isNaN(ratio)) {
                continue;
            }
            sizes++;
            boolean worse = Double.isNaN(worstRatio)
                    || (target.kind() == Kind.BUSBW_AT_LEAST ? ratio < worstRatio : ratio > worstRatio);
            if (worse) {
                worstRatio = ratio;
                worst = target.kind() == Kind.BUSBW_AT_LEAST ? Numbers.significant(ratio, 3)
                        : Numbers.significant(ringstar.p50Micros(), 3) + " µs vs "
                                + Numbers.significant(mpi.p50Micros(), 3) + " µs (" + Numbers.significant(ratio, 3)
                                + "×)";
                if (target.fromBytes() != target.toBytes()) {
                    worst += " at " + Numbers.bytesLabel(size);
                }
            }
        }
        if (wrong) {
            return new String[] {"wrong elements", "no"};
        }
        if (sizes == 0) {
            return new String[] {"", "no data"};
        }
        if (target.fromBytes() != target.toBytes()) {
            worst += sizes > 1 ? " (worst of " + sizes + ")" : "";
        }
        boolean met = target.kind() == Kind.BUSBW_AT_LEAST ? worstRatio >= target.bound()
                : worstRatio <= target.bound();
        return new String[] {worst, met ? "yes" : "**no**"};
    }

    private static String key(int worldSize, long size, String algorithm, String op, String transport) {
        return String.join(" ", Integer.toString(worldSize), Long.toString(size), algorithm, op, transport);
    }
}
