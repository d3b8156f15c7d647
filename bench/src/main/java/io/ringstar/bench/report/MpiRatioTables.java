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
 */
public final class MpiRatioTables {
    /**
     * One column: a ringstar operation over a transport against an Open MPI operation over its own.
     *
     * @param algorithm ringstar's algorithm ({@code ring}, {@code ps})
     * @param op the op on both sides ({@code reduce}, {@code broadcast})
     * @param transport ringstar's transport label
     * @param mpiAlgorithm Open MPI's algorithm label ({@code mpi}, {@code mpi-reduce-bcast})
     * @param mpiTransport Open MPI's transport label ({@code mpi-tcp}, {@code mpi-shm})
     * @param title the column's title
     */
    public record Pair(String algorithm, String op, String transport, String mpiAlgorithm, String mpiTransport,
            String title) {
    }

    /** The columns, in order: Netty and Aeron UDP against TCP, Aeron IPC against shared memory. */
    public static final List<Pair> PAIRS = List.of(
            new Pair("ring", "reduce", "netty", "mpi", "mpi-tcp", "ring ÷ Allreduce, Netty ÷ tcp"),
            new Pair("ring", "reduce", "aeron-udp", "mpi", "mpi-tcp", "ring ÷ Allreduce, Aeron UDP ÷ tcp"),
            new Pair("ring", "reduce", "aeron-ipc", "mpi", "mpi-shm", "ring ÷ Allreduce, Aeron IPC ÷ shm"),
            new Pair("ps", "reduce", "netty", "mpi-reduce-bcast", "mpi-tcp", "star ÷ Reduce+Bcast, Netty ÷ tcp"),
            new Pair("ps", "reduce", "aeron-udp", "mpi-reduce-bcast", "mpi-tcp",
                    "star ÷ Reduce+Bcast, Aeron UDP ÷ tcp"),
            new Pair("ps", "reduce", "aeron-ipc", "mpi-reduce-bcast", "mpi-shm",
                    "star ÷ Reduce+Bcast, Aeron IPC ÷ shm"),
            new Pair("ps", "broadcast", "netty", "mpi", "mpi-tcp", "star bcast ÷ Bcast, Netty ÷ tcp"),
            new Pair("ps", "broadcast", "aeron-udp", "mpi", "mpi-tcp", "star bcast ÷ Bcast, Aeron UDP ÷ tcp"),
            new Pair("ps", "broadcast", "aeron-ipc", "mpi", "mpi-shm", "star bcast ÷ Bcast, Aeron IPC ÷ shm"));
    private static final List<String> TYPES = List.of("float", "double");

    private MpiRatioTables() {
    }

    /** Every table, each after a blank line and a bold title; the empty string when no pair has both sides. */
    public static String render(List<ResultRow> rows) {
        Map<String, ResultRow> byKey = new HashMap<>();
        TreeSet<Integer> worldSizes = new TreeSet<>();
        TreeSet<Long> sizes = new TreeSet<>();
        for (ResultRow row : rows) {
            byKey.put(key(row.worldSize(), row.type(), row.sizeBytes(), row.algorithm(), row.op(), row.transport()),
                    row);
            worldSizes.add(row.worldSize());
            sizes.add(row.sizeBytes());
        }
        StringBuilder text = new StringBuilder();
        for (int n : worldSizes) {
            for (String type : TYPES) {
                List<Pair> used = new ArrayList<>();
                for (Pair pair : PAIRS) {
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
                text.append("\n**World size ").append(n).append(", ").append(type)
                        .append("** (busbw ringstar ÷ busbw Open MPI)\n\n").append(table.render());
            }
        }
        return text.toString();
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
        return rows.get(key(n, type, size, pair.mpiAlgorithm(), pair.op(), pair.mpiTransport()));
    }

    private static String key(int worldSize, String type, long size, String algorithm, String op, String transport) {
        return String.join(" ", Integer.toString(worldSize), type, Long.toString(size), algorithm, op, transport);
    }
}
