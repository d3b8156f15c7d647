package io.ringstar.bench.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * compare-mpi.sh's ratios: ringstar's busbw divided by Open MPI's at the same world size, type, size
 * and op (above 1 ringstar moved the bytes faster). A table per world size and type, a row per size,
 * a column per {@link Pair} both sides of which the file has; "wrong" where either row was wrong.
 * The aggregators' pairs ({@link #PAIRS}) and the communicator's ({@link #COMMUNICATOR_PAIRS}) have
 * tables of their own. Issue 28's targets, met or not, are {@link TargetsTable}'s.
 */
public final class MpiRatioTables {
    /**
     * One column: a ringstar operation over a transport against an Open MPI operation over its own.
     *
     * @param algorithm ringstar's algorithm ({@code ring}, {@code ps})
     * @param op ringstar's op ({@code reduce}, {@code broadcast}, {@code allreduce}, ...)
     * @param transport ringstar's transport label
     * @param mpiAlgorithm Open MPI's algorithm label ({@code mpi}, {@code mpi-reduce-bcast})
     * @param mpiOp Open MPI's op label
     * @param mpiTransport Open MPI's transport label ({@code mpi-tcp}, {@code mpi-shm})
     * @param title the column's title
     */
    public record Pair(String algorithm, String op, String transport, String mpiAlgorithm, String mpiOp,
            String mpiTransport, String title) {
    }

    /**
     * ringstar's transport labels with the Open MPI transport each is compared with and the title's
     * words: Netty with its default options (which use shared memory between ranks on one host) and
     * Aeron IPC against Open MPI's shared memory; Netty with {@code sharedMemory=off} ({@code netty-tcp})
     * and Aeron UDP against its TCP.
     */
    private static final String[][] TRANSPORTS = {{"netty", "mpi-shm", "Netty ÷ shm"},
        {"netty-tcp", "mpi-tcp", "Netty TCP ÷ tcp"}, {"aeron-udp", "mpi-tcp", "Aeron UDP ÷ tcp"},
        {"aeron-ipc", "mpi-shm", "Aeron IPC ÷ shm"}};
    /**
     * The aggregators' columns, in order: the ring's reduceGradients and reduceGradientsInto against
     * MPI_Allreduce, the star's reduce against MPI_Reduce + MPI_Bcast and its broadcast against
     * MPI_Bcast, each over every transport of {@link #TRANSPORTS}.
     */
    public static final List<Pair> PAIRS = pairs(new String[][] {
        {"ring", "reduce", "mpi", "reduce", "ring ÷ Allreduce"},
        {"ring", "reduceinto", "mpi", "reduce", "ring into ÷ Allreduce"},
        {"ps", "reduce", "mpi-reduce-bcast", "reduce", "star ÷ Reduce+Bcast"},
        {"ps", "reduceinto", "mpi-reduce-bcast", "reduce", "star into ÷ Reduce+Bcast"},
        {"ps", "broadcast", "mpi", "broadcast", "star bcast ÷ Bcast"}});
    /**
     * The communicator's columns ({@code bench --algorithm comm}, its all-reduce algorithm chosen by
     * size): each op against its Open MPI counterpart over every transport of {@link #TRANSPORTS}.
     * Its allreduce meets MPI_Allreduce (Open MPI's {@code mpi reduce} rows), its reduce to rank 0
     * MPI_Reduce ({@code mpi-reduce reduce}).
     */
    public static final List<Pair> COMMUNICATOR_PAIRS = pairs(new String[][] {
        {"comm", "allreduce", "mpi", "reduce", "allreduce ÷ Allreduce"},
        {"comm", "allgather", "mpi", "allgather", "allgather ÷ Allgather"},
        {"comm", "reducescatter", "mpi", "reducescatter", "reducescatter ÷ Reduce_scatter_block"},
        {"comm", "broadcast", "mpi", "broadcast", "broadcast ÷ Bcast"},
        {"comm", "reduce", "mpi-reduce", "reduce", "reduce ÷ Reduce"}});
    private static final List<String> TYPES = List.of("float", "double");

    private MpiRatioTables() {
    }

    /** Every op (ringstar's algorithm and op, Open MPI's, the title's words) over every transport. */
    private static List<Pair> pairs(String[][] ops) {
        List<Pair> pairs = new ArrayList<>();
        for (String[] op : ops) {
            for (String[] transport : TRANSPORTS) {
                pairs.add(new Pair(op[0], op[1], transport[0], op[2], op[3], transport[1],
                        op[4] + ", " + transport[2]));
            }
        }
        return List.copyOf(pairs);
    }

    /**
     * Every table, each after a blank line and a bold title, the aggregators' first; the empty
     * string when no pair has both sides.
     */
    public static String render(List<ResultRow> rows) {
        Map<String, ResultRow> byKey = new HashMap<>();
        TreeSet<Integer> worldSizes = new TreeSet<>();
        TreeSet<Long> sizes = new TreeSet<>();
        for (ResultRow row : rows) {
            byKey.put(key(row.worldSize(), row.type(), sizeRow(row.sizeBytes()), row.algorithm(), row.op(),
                    row.transport()),
                    row);
            worldSizes.add(row.worldSize());
            sizes.add(sizeRow(row.sizeBytes()));
        }
        StringBuilder text = new StringBuilder();
        render(text, PAIRS, "", byKey, worldSizes, sizes);
        render(text, COMMUNICATOR_PAIRS, ", Communicator", byKey, worldSizes, sizes);
        return text.toString();
    }

    private static void render(StringBuilder text, List<Pair> pairs, String titleSuffix,
            Map<String, ResultRow> byKey, TreeSet<Integer> worldSizes, TreeSet<Long> sizes) {
        for (int n : worldSizes) {
            for (String type : TYPES) {
                List<Pair> used = new ArrayList<>();
                for (Pair pair : pairs) {
                    if (sizes.stream().anyMatch(size -> ringstar(byKey, n, type, size, pair) != null
                            && mpi(byKey, n, type, size, pair) != null)) {
                        used.add(pair);
                    }
                }
                if (used.isEmpty()) {
                    continue;
                }
                List<String> header = new ArrayList<>(List.of("size"));
                used.forEach(pair -> header.add(pair.title()));
                MarkdownTable table = MarkdownTable.numeric(header);
                for (long size : sizes) {
                    List<String> line = new ArrayList<>(List.of(Numbers.bytesLabel(size)));
                    for (Pair pair : used) {
                        line.add(cell(ringstar(byKey, n, type, size, pair), mpi(byKey, n, type, size, pair)));
                    }
                    if (line.stream().skip(1).anyMatch(cell -> !cell.isEmpty())) {
                        table.add(line);
                    }
                }
                text.append("\n**World size ").append(n).append(", ").append(type).append(titleSuffix)
                        .append("** (busbw ringstar ÷ busbw Open MPI").append(pairs == COMMUNICATOR_PAIRS
                                ? "; allgather and reducescatter at the size rounded down to whole elements per rank"
                                : "").append(")\n\n").append(table.render());
            }
        }
    }

    /**
     * The table row of a size: the power of two at or above it. All-gather and reduce-scatter round
     * the sweep's power-of-two sizes down to whole elements per rank (1020 B for 1 KiB of floats at 3
     * ranks), always to more than half of it, so they share the row of the size they came from (both
     * sides round alike, so the pair compares equal sizes).
     */
    static long sizeRow(long sizeBytes) {
        return sizeBytes <= 1 ? sizeBytes : Long.highestOneBit(sizeBytes - 1) << 1;
    }

    /** ringstar's busbw ÷ Open MPI's with 3 significant digits; empty when either is missing or Open MPI's is 0. */
    static String cell(ResultRow ringstar, ResultRow mpi) {
        if (ringstar == null || mpi == null) {
            return "";
        }
        if (ringstar.isWrong() || mpi.isWrong()) {
            return "wrong";
        }
        if (mpi.busbwGbps() <= 0) {
            return "";
        }
        return Numbers.significant(ringstar.busbwGbps() / mpi.busbwGbps(), 3);
    }

    private static ResultRow ringstar(Map<String, ResultRow> rows, int n, String type, long size, Pair pair) {
        return rows.get(key(n, type, size, pair.algorithm(), pair.op(), pair.transport()));
    }

    private static ResultRow mpi(Map<String, ResultRow> rows, int n, String type, long size, Pair pair) {
        return rows.get(key(n, type, size, pair.mpiAlgorithm(), pair.mpiOp(), pair.mpiTransport()));
    }

    private static String key(int worldSize, String type, long size, String algorithm, String op, String transport) {
        return String.join(" ", Integer.toString(worldSize), type, Long.toString(size), algorithm, op, transport);
    }
}
