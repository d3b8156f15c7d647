package io.ringstar.bench.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The sweep's busbw table for one element type: a row per size (the powers of 4 among the measured
 * powers of 2, and the largest size), a column per transport, algorithm and op in the order the
 * file first names them; a cell is the busbw in GB/s with 3 significant digits, or "wrong".
 */
public final class BusBandwidthTable {
    private BusBandwidthTable() {
    }

    /** The table of the rows of {@code type}, or the empty string when there are none. */
    public static String render(List<ResultRow> rows, String type) {
        Set<String> columns = new LinkedHashSet<>();
        Map<String, String> cells = new HashMap<>();
        TreeSet<Long> sizes = new TreeSet<>();
        for (ResultRow row : rows) {
            if (!row.type().equals(type)) {
                continue;
            }
            String column = row.transport() + " " + row.algorithm() + " " + row.op();
            columns.add(column);
            sizes.add(row.sizeBytes());
            String cell = row.isWrong() ? "wrong" : Numbers.significant(row.busbwGbps(), 3);
            cells.put(row.sizeBytes() + " " + column, cell);
        }
        if (columns.isEmpty()) {
            return "";
        }
        List<String> header = new ArrayList<>(List.of("size"));
        header.addAll(columns);
        MarkdownTable table = MarkdownTable.numeric(header);
        long largest = sizes.last();
        for (long size : sizes) {
            if (!shown(size, largest)) {
                continue;
            }
            List<String> line = new ArrayList<>(List.of(Numbers.bytesLabel(size)));
            for (String column : columns) {
                line.add(cells.getOrDefault(size + " " + column, ""));
            }
            table.add(line);
        }
        return table.render();
    }

    /** Whether the row of {@code size} is shown: a power of 2 that is a power of 4 or the largest size. */
    static boolean shown(long size, long largest) {
        if (size <= 0 || Long.bitCount(size) != 1) {
            return false;
        }
        return Long.numberOfTrailingZeros(size) % 2 == 0 || size == largest;
    }
}
