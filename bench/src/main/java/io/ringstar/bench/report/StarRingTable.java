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
 * per world size, transport, type and star (one server, {@code ps}, or several, {@code ps-s2} and so
 * on) (above 1 the ring is faster); then, per column, where they cross
 * ({@link Crossing}), star ÷ ring at the largest size and, on a shaped link, the n/2 a link-bound run
 * tends to and the share of the link rate that the ring's busbw used there.
 */
public final class StarRingTable {
    private static final String STAR = "ps";
    private static final String RING = "ring";

    /** The rows of one world size, transport, type and star (one or more servers), by size. */
    private static final class Group {
        final int worldSize;
        final String title;
        final Map<Long, Double> star = new HashMap<>();
        final Map<Long, Double> ring;
        final Map<Long, Double> ringBusbw;
        final Map<Long, Long> wrong = new HashMap<>();

        Group(ResultRow row, RingRows rings) {
            worldSize = row.worldSize();
            title = "n=" + row.worldSize() + " " + row.transport() + " " + row.type()
                    + (row.algorithm().equals(STAR) ? "" : " " + row.algorithm());
            ring = rings.times;
            ringBusbw = rings.busbw;
            rings.wrong.forEach((size, count) -> wrong.merge(size, count, Long::sum));
        }

        boolean both(long size) {
            return star.containsKey(size) && ring.containsKey(size);
        }

        double ratio(long size) {
            return star.get(size) / ring.get(size);
        }
    }

    /** The ring's rows of one world size, transport and type, which every star of them is divided by. */
    private static final class RingRows {
        final Map<Long, Double> times = new HashMap<>();
        final Map<Long, Double> busbw = new HashMap<>();
        final Map<Long, Long> wrong = new HashMap<>();
    }

    /** Whether {@code label} is the star, with one server ({@code ps}) or more ({@code ps-s2}, ...). */
    private static boolean isStar(String label) {
        return label.equals(STAR) || label.matches(STAR + "-s\\d+");
    }

    private StarRingTable() {
    }

    /**
     * The table and its summary lines.
     *
     * @param rows result rows; only the reduce rows of the star ({@code ps}, {@code ps-s2}, ...) and the ring are read
     * @param linkBitsPerSecond the rate every link was shaped to, 0 when unshaped (no n/2, no link share)
     */
    public static String render(List<ResultRow> rows, double linkBitsPerSecond) {
        Map<String, RingRows> rings = new HashMap<>();
        for (ResultRow row : rows) {
            if (row.op().equals("reduce") && row.algorithm().equals(RING)) {
                RingRows ring = rings.computeIfAbsent(key(row), key -> new RingRows());
                ring.times.put(row.sizeBytes(), row.p50Micros());
                ring.busbw.put(row.sizeBytes(), row.busbwGbps());
                ring.wrong.merge(row.sizeBytes(), row.isWrong() ? row.wrong() : 0, Long::sum);
            }
        }
        Map<String, Group> groups = new LinkedHashMap<>();
        TreeSet<Long> sizes = new TreeSet<>();
        for (ResultRow row : rows) {
            if (!row.op().equals("reduce") || !isStar(row.algorithm()) || !rings.containsKey(key(row))) {
                continue;
            }
            Group group = groups.computeIfAbsent(key(row) + " " + row.algorithm(),
                    key -> new Group(row, rings.get(key(row))));
            long size = row.sizeBytes();
            group.star.put(size, row.p50Micros());
            group.wrong.merge(size, row.isWrong() ? row.wrong() : 0, Long::sum);
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

    private static String key(ResultRow row) {
        return row.worldSize() + " " + row.transport() + " " + row.type();
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
