package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class VersusMpiTableTest {
    @Test
    void ringstarP50OverOpenMpisPerWorldSize() {
        List<ResultRow> rows = List.of(
                Fixtures.row(2, "netty", "float", "ring", "reduce", 1024, 30, 0),
                Fixtures.row(2, "mpi-tcp", "float", "mpi", "reduce", 1024, 20, 0),
                Fixtures.row(2, "netty", "float", "ps", "reduce", 1024, 10, 0),
                Fixtures.row(2, "mpi-tcp", "float", "mpi-reduce-bcast", "reduce", 1024, 40, 0),
                Fixtures.row(4, "netty", "float", "ring", "reduce", 1024, 5, 0),
                Fixtures.row(4, "mpi-tcp", "float", "mpi", "reduce", 1024, 0, 0),
                Fixtures.row(4, "mpi-tcp", "float", "mpi", "broadcast", 2048, 1, 0));
        String expected = """
                | size | n=2 ring ÷ Allreduce | n=2 star ÷ Reduce+Bcast | n=4 ring ÷ Allreduce | \
                n=4 star ÷ Reduce+Bcast |
                |---:|---:|---:|---:|---:|
                | 1 KiB | 1.50 | 0.25 |  |  |
                """;
        assertEquals(expected, VersusMpiTable.render(rows));
    }
}
