package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class CrossingTest {
    /**
     * Closed form: the star costs 2 steps of latency a and n-1 copies at bandwidth b, the ring 2(n-1)
     * steps and 2(n-1)/n copies. With n = 4, a = 100 µs and b = 1 byte/µs: star = 200 + 3s, ring =
     * 600 + 1.5s, equal at s = 266.7 bytes, so the ring is faster from 512 B on among powers of 2.
     */
    private static TreeMap<Long, Crossing.Times> latencyBandwidth(long from, long to) {
        TreeMap<Long, Crossing.Times> times = new TreeMap<>();
        for (long size = from; size <= to; size *= 2) {
            times.put(size, new Crossing.Times(200 + 3.0 * size, 600 + 1.5 * size, false));
        }
        return times;
    }

    @Test
    void theRingOvertakesTheStarWhereTheClosedFormsCross() {
        Crossing crossing = Crossing.of(latencyBandwidth(4, 1 << 20));
        assertEquals(new Crossing(4, 1 << 20, 512), crossing);
        assertEquals("the ring is faster from 512 B up to the largest size measured, 1 MiB", crossing.describe());
    }

    @Test
    void everySizeNoSizeAndOnlyTheLargest() {
        assertEquals("the ring is faster at every size measured (512 B to 4 KiB)",
                Crossing.of(latencyBandwidth(512, 4096)).describe());
        assertEquals("the star is faster or as fast at 256 B, the largest size measured",
                Crossing.of(latencyBandwidth(4, 256)).describe());
        assertEquals("the ring is faster only at the largest size measured, 512 B",
                Crossing.of(latencyBandwidth(4, 512)).describe());
    }

    @Test
    void aSlowerRingBelowTheLargestEndsTheRunAndWrongSizesAreSkipped() {
        TreeMap<Long, Crossing.Times> times = latencyBandwidth(4, 8192);
        times.put(2048L, new Crossing.Times(1, 2, false));
        times.put(8192L, new Crossing.Times(1, 2, true));
        // 8 KiB is wrong, so the largest measured right is 4 KiB; 2 KiB breaks the run.
        assertEquals(new Crossing(4, 4096, 4096), Crossing.of(times));
    }

    @Test
    void nothingMeasuredRight() {
        TreeMap<Long, Crossing.Times> times = new TreeMap<>();
        times.put(4L, new Crossing.Times(2, 1, true));
        assertFalse(Crossing.of(times).measured());
        assertFalse(Crossing.of(new TreeMap<>()).measured());
    }
}
