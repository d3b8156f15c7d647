package io.ringstar.bench.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * ringstar's p50 time of reduce divided by Open MPI's over the same links, a row per size and two
 * columns per world size: the ring against MPI_Allreduce ({@code mpi}) and the star ({@code ps})
 * against MPI_Reduce + MPI_Bcast ({@code mpi-reduce-bcast}). Above 1 ringstar is slower.
 */
public final class VersusMpiTable {
    private static final List<List<String>> PAIRS = List.of(List.of("ring", "mpi"), List.of("ps", "mpi-reduce-bcast"));

    private VersusMpiTable() {
    }

    /** The table of the reduce rows of {@code rows}. */
    public static String render(List<ResultRow> rows) {
        Map<String, Double> p50 = new HashMap<>();
        TreeSet<Integer> worldSizes = new TreeSet<>();
        TreeSet<Long> sizes = new TreeSet<>();
        for (ResultRow row : rows) {
            if (row.op().equals("reduce")) {
                p50.put(key(row.worldSize(), row.sizeBytes(), row.algorithm()), row.p50Micros());
                worldSizes.add(row.worldSize());
                sizes.add(row.sizeBytes());
            }
        }
        List<String> header = new ArrayList<>(List.of("size"));
        for (int n : worldSizes) {
            header.add("n=" + n + " ring ÷ Allreduce");
            header.add("n=" + n + " star ÷ Reduce+Bcast");
        }
        MarkdownTable table = MarkdownTable.numeric(header);
        for (long size : sizes) {
            List<String> line = new ArrayList<>(List.of(Numbers.bytesLabel(size)));
            for (int n : worldSizes) {
                for (List<String> pair : PAIRS) {
                    Double ringstar = p50.get(key(n, size, pair.get(0)));
                    Double mpi = p50.get(key(n, size, pair.get(1)));
                    line.add(ringstar == null || mpi == null || mpi <= 0 ? "" : Numbers.fixed(ringstar / mpi, 2));
                }
            }
            table.add(line);
        }
        return table.render();
    }

    private static String key(int worldSize, long size, String algorithm) {
        return worldSize + " " + size + " " + algorithm;
    }
}
