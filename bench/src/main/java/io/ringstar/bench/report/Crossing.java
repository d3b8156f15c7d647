package io.ringstar.bench.report;

import java.util.Map;
import java.util.NavigableMap;

/**
 * Where the ring overtakes the star: the smallest size from which the ring's time is below the star's
 * at every larger size measured right by both.
 *
 * @param first the smallest size both measured (right or not), 0 if none
 * @param largest the largest size both measured right, 0 if none
 * @param from the crossing: the smallest size of the run of sizes up to {@code largest} at which the
 *     ring is faster, 0 when the ring is not faster at {@code largest}
 */
public record Crossing(long first, long largest, long from) {

    /** The star's and the ring's time at one size, and whether either was wrong there. */
    public record Times(double star, double ring, boolean wrong) {
    }

    /** The crossing of {@code times}, by size; absent sizes were not measured by both algorithms. */
    public static Crossing of(NavigableMap<Long, Times> times) {
        long largest = 0;
        long from = 0;
        for (Map.Entry<Long, Times> entry : times.descendingMap().entrySet()) {
            Times at = entry.getValue();
            if (at.wrong()) {
                continue;
            }
            if (largest == 0) {
                largest = entry.getKey();
            }
            if (at.star() > at.ring()) {
                from = entry.getKey();
            } else {
                break;
            }
        }
        return new Crossing(times.isEmpty() ? 0 : times.firstKey(), largest, from);
    }

    /** Whether some size was measured right by both. */
    public boolean measured() {
        return largest != 0;
    }

    /** The sentence that says where the ring is faster. */
    public String describe() {
        if (from == 0) {
            return "the star is faster or as fast at " + Numbers.bytesLabel(largest) + ", the largest size measured";
        }
        if (from == first) {
            return "the ring is faster at every size measured (" + Numbers.bytesLabel(first) + " to "
                    + Numbers.bytesLabel(largest) + ")";
        }
        if (from == largest) {
            return "the ring is faster only at the largest size measured, " + Numbers.bytesLabel(largest);
        }
        return "the ring is faster from " + Numbers.bytesLabel(from) + " up to the largest size measured, "
                + Numbers.bytesLabel(largest);
    }
}
