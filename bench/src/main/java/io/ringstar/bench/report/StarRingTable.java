package io.ringstar.bench.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Star against ring: the star's p50 time of reduce divided by the ring's, a row per size and a column
 * per world size, transport and type (above 1 the ring is faster); then, per column, where they cross
 * ({@link Crossing}), star ÷ ring at the largest size and, on a shaped link, the n/2 a link-bound run
 * tends to and the share of the link rate that the ring's busbw used there.
 */
public final class StarRingTable {
    private static final String STAR = "ps";
    private static final String RING = "ring";

    /** The rows of one world size, transport and type, by size. */
    private static final class Group {
        final int worldSize;
        final String title;
        final Map<Long, Double> star = new HashMap<>();
        final Map<Long, Double> ring = new HashMap<>();
        final Map<Long, Double> ringBusbw = new HashMap<>();
        final Map<Long, Long> wrong = new HashMap<>();

        Group(ResultRow row) {
            worldSize = row.worldSize();
            title = "n=" + row.worldSize() + " " + row.transport() + " " + row.type();
        }

        boolean both(long size) {
            return star.containsKey(size) && ring.containsKey(size);
        }

        double ratio(long size) {
            return star.get(size) / ring.get(size);
        }
    }

    private StarRingTable() {
    }

    /**
     * The table and its summary lines.
     *
     * @param rows result rows; only the reduce rows of the star ({@code ps}) and the ring are read
     * @param linkBitsPerSecond the rate every link was shaped to, 0 when unshaped (no n/2, no link share)
     */
    public static String render(List<ResultRow> rows, double linkBitsPerSecond) {
        Map<String, Group> groups = new LinkedHashMap<>();
        TreeSet<Long> sizes = new TreeSet<>();
        for (ResultRow row : rows) {
            boolean star = row.algorithm().equals(STAR);
            if (!row.op().equals("reduce") || !star && !row.algorithm().equals(RING)) {
                continue;
            }
            Group group = groups.computeIfAbsent(row.worldSize() + " " + row.transport() + " " + row.type(),
                    key -> new Group(row));
            long size = row.sizeBytes();
            (star ? group.star : group.ring).put(size, row.p50Micros());
            if (!star) {
                group.ringBusbw.put(size, row.busbwGbps());
            }
            group.wrong.merge(size, row.wrong(), Long::sum);
            sizes.add(size);
        }
        if (groups.isEmpty()) {
            return "No reduce rows of the star and the ring.\n";
        }
        List<String> header = new ArrayList<>(List.of("size"));
        groups.values().forEach(group -> header.add(group.title + ": star ÷ ring"));
        MarkdownTable table = MarkdownTable.numeric(header);
        for (long size : sizes) {
            List<String> line = new ArrayList<>(List.of(Numbers.bytesLabel(size)));
            for (Group group : groups.values()) {
                line.add(cell(group, size));
            }
            table.add(line);
        }
        StringBuilder text = new StringBuilder(table.render()).append('\n');
        for (Group group : groups.values()) {
            text.append(summary(group, sizes, linkBitsPerSecond)).append('\n');
        }
        return text.toString();
    }

    private static String cell(Group group, long size) {
        if (!group.both(size) || group.ring.get(size) <= 0) {
            return "";
        }
        if (group.wrong.get(size) != 0) {
            return "wrong";
        }
        return Numbers.fixed(group.ratio(size), 2);
    }

    private static String summary(Group group, TreeSet<Long> sizes, double linkBitsPerSecond) {
        TreeMap<Long, Crossing.Times> times = new TreeMap<>();
        for (long size : sizes) {
            if (group.both(size)) {
                times.put(size, new Crossing.Times(group.star.get(size), group.ring.get(size),
                        group.wrong.get(size) != 0));
            }
        }
        Crossing crossing = Crossing.of(times);
        if (!crossing.measured()) {
            return "- " + group.title + ": no size was measured right by both algorithms";
        }
        long largest = crossing.largest();
        String link = "";
        if (linkBitsPerSecond > 0) {
            // n/2 and the link share only mean something on a shaped link.
            link = " (n/2 = " + Numbers.fixed(group.worldSize / 2.0, 1) + "); the ring's busbw there is "
                    + Numbers.fixed(100 * group.ringBusbw.get(largest) * 8e9 / linkBitsPerSecond, 0)
                    + "% of the link rate";
        }
        return "- " + group.title + ": " + crossing.describe() + "; star ÷ ring at " + Numbers.bytesLabel(largest)
                + " is " + Numbers.fixed(group.ratio(largest), 2) + link;
    }
}
