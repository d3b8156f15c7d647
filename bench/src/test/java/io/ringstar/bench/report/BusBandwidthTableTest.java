package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BusBandwidthTableTest {
    @Test
    void powersOfFourAndTheLargestSizeOneColumnPerTransportAlgorithmAndOp() {
        List<ResultRow> rows = new ArrayList<>();
        for (long size = 4; size <= 512; size *= 2) {
            // busbw = size / 1000 GB/s: 0.004 at 4 B ... 0.512 at 512 B.
            rows.add(Fixtures.row(4, "netty", "float", "ring", "reduce", size, 1, size / 1000.0));
            if (size != 64) {
                rows.add(Fixtures.row(4, "aeron", "float", "ps", "broadcast", size, 1, size / 3000.0));
            }
        }
        rows.add(new ResultRow(4, "netty", "float", "ring", "reduce", 16, 1, 2, 1, 3));
        rows.add(Fixtures.row(4, "netty", "double", "ring", "reduce", 1 << 20, 1, 9));
        String expected = """
                | size | netty ring reduce | aeron ps broadcast |
                |---:|---:|---:|
                | 4 B | 0.004 | 0.00133 |
                | 16 B | wrong | 0.00533 |
                | 64 B | 0.064 |  |
                | 256 B | 0.256 | 0.0853 |
                | 512 B | 0.512 | 0.171 |
                """;
        assertEquals(expected, BusBandwidthTable.render(rows, "float"));
    }

    @Test
    void noRowsOfTheTypeIsNoTable() {
        assertEquals("", BusBandwidthTable.render(List.of(Fixtures.row(4, "netty", "float", "ring", "reduce", 4, 1,
                1)), "double"));
    }

    @Test
    void onlyPowersOfTwoAreShown() {
        assertTrue(BusBandwidthTable.shown(1, 64));
        assertTrue(BusBandwidthTable.shown(16, 64));
        assertFalse(BusBandwidthTable.shown(32, 64));
        assertTrue(BusBandwidthTable.shown(32, 32));
        assertFalse(BusBandwidthTable.shown(48, 48));
    }
}
