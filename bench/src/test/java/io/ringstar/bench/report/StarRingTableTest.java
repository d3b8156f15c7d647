package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StarRingTableTest {
    @Test
    void ratiosPerSizeAndGroupWithTheCrossingAndTheLinkShare() {
        List<ResultRow> rows = new ArrayList<>();
        for (long size : new long[] {1024, 2048, 4096}) {
            // Star ÷ ring = size / 2048: 0.5, 1, 2.
            rows.add(Fixtures.row(2, "netty", "float", "ps", "reduce", size, size, 0));
            rows.add(Fixtures.row(2, "netty", "float", "ring", "reduce", size, 2048, 0.1));
        }
        // Ignored: a broadcast, and Open MPI's rows.
        rows.add(Fixtures.row(2, "netty", "float", "ps", "broadcast", 1024, 1, 1));
        rows.add(Fixtures.row(2, "mpi-tcp", "float", "mpi", "reduce", 1024, 1, 1));
        String expected = """
                | size | n=2 netty float: star ÷ ring |
                |---:|---:|
                | 1 KiB | 0.50 |
                | 2 KiB | 1.00 |
                | 4 KiB | 2.00 |

                - n=2 netty float: the ring is faster only at the largest size measured, 4 KiB; star ÷ ring at 4 KiB \
                is 2.00 (n/2 = 1.0); the ring's busbw there is 80% of the link rate
                """;
        // busbw 0.1 GB/s is 0.8 Gbit/s: 80% of 1 Gbit/s.
        assertEquals(expected, StarRingTable.render(rows, 1e9));
    }

    @Test
    void columnsInFirstSeenOrderEmptyAndWrongCellsAndNoLinkWithoutARate() {
        List<ResultRow> rows = List.of(
                Fixtures.row(3, "aeron", "double", "ps", "reduce", 8, 3, 0),
                Fixtures.row(3, "aeron", "double", "ring", "reduce", 8, 1, 0),
                Fixtures.row(2, "inproc", "float", "ring", "reduce", 8, 1, 0),
                Fixtures.row(2, "inproc", "float", "ps", "reduce", 16, 1, 0),
                new ResultRow(2, "inproc", "float", "ring", "reduce", 16, 1, 1, 0, 5));
        String expected = """
                | size | n=3 aeron double: star ÷ ring | n=2 inproc float: star ÷ ring |
                |---:|---:|---:|
                | 8 B | 3.00 |  |
                | 16 B |  | wrong |

                - n=3 aeron double: the ring is faster at every size measured (8 B to 8 B); star ÷ ring at 8 B is 3.00
                - n=2 inproc float: no size was measured right by both algorithms
                """;
        assertEquals(expected, StarRingTable.render(rows, 0));
    }

    @Test
    void aColumnPerNumberOfServersEachAgainstTheSameRing() {
        List<ResultRow> rows = new ArrayList<>();
        rows.add(Fixtures.row(4, "netty", "float", "ring", "reduce", 1024, 100, 0));
        rows.add(Fixtures.row(4, "netty", "float", "ps", "reduce", 1024, 200, 0));
        rows.add(Fixtures.row(4, "netty", "float", "ps-s2", "reduce", 1024, 150, 0));
        rows.add(Fixtures.row(4, "netty", "float", "ps-s4", "reduce", 1024, 110, 0));
        // Not a star with servers: compressed rows have tables of their own.
        rows.add(Fixtures.row(4, "netty", "float", "ps-fp16", "reduce", 1024, 1, 0));
        String table = StarRingTable.render(rows, 0);
        String header = table.lines().findFirst().orElseThrow();
        assertEquals("| size | n=4 netty float: star ÷ ring | n=4 netty float ps-s2: star ÷ ring "
                + "| n=4 netty float ps-s4: star ÷ ring |", header);
        assertEquals("| 1 KiB | 2.00 | 1.50 | 1.10 |", table.lines().skip(2).findFirst().orElseThrow());
    }

    @Test
    void noRowsSaysSo() {
        assertEquals("No reduce rows of the star and the ring.\n", StarRingTable.render(List.of(), 0));
    }
}
