package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class MpiRatioTablesTest {
    @Test
    void ringstarOverOpenMpiPerPairPresentAndSize() {
        List<ResultRow> rows = List.of(
                Fixtures.row(2, "mpi-tcp", "float", "mpi", "reduce", 4, 1, 0.5),
                Fixtures.row(2, "mpi-tcp", "float", "mpi", "reduce", 1024, 1, 3),
                Fixtures.row(2, "mpi-tcp", "float", "mpi-reduce-bcast", "reduce", 4, 1, 0.25),
                Fixtures.row(2, "netty", "float", "ring", "reduce", 4, 1, 1),
                Fixtures.row(2, "netty", "float", "ring", "reduce", 1024, 1, 1),
                new ResultRow(2, "netty", "float", "ps", "reduce", 4, 1, 1, 1, 2),
                // No Open MPI row over shared memory: no Aeron IPC column.
                Fixtures.row(2, "aeron-ipc", "float", "ring", "reduce", 4, 1, 1),
                // Another world size and type: their own table.
                Fixtures.row(3, "mpi-tcp", "double", "mpi", "broadcast", 8, 1, 2),
                Fixtures.row(3, "netty", "double", "ps", "broadcast", 8, 1, 1));
        String expected = """

                **World size 2, float** (busbw ringstar ÷ busbw Open MPI)

                | size | ring ÷ Allreduce, Netty ÷ tcp | star ÷ Reduce+Bcast, Netty ÷ tcp |
                |---:|---:|---:|
                | 4 B | 2 | wrong |
                | 1 KiB | 0.333 |  |

                **World size 3, double** (busbw ringstar ÷ busbw Open MPI)

                | size | star bcast ÷ Bcast, Netty ÷ tcp |
                |---:|---:|
                | 8 B | 0.5 |
                """;
        assertEquals(expected, MpiRatioTables.render(rows));
    }

    @Test
    void theCommunicatorsOpsMeetTheirOpenMpiCounterpartsInATableOfTheirOwn() {
        List<ResultRow> rows = List.of(
                Fixtures.row(3, "mpi-tcp", "float", "mpi", "reduce", 1024, 1, 2),
                Fixtures.row(3, "mpi-tcp", "float", "mpi", "allgather", 1020, 1, 4),
                Fixtures.row(3, "mpi-tcp", "float", "mpi", "reducescatter", 1020, 1, 1),
                Fixtures.row(3, "mpi-tcp", "float", "mpi-reduce", "reduce", 1024, 1, 8),
                Fixtures.row(3, "mpi-tcp", "float", "mpi", "broadcast", 1024, 1, 3),
                Fixtures.row(3, "netty", "float", "comm", "allreduce", 1024, 1, 1),
                Fixtures.row(3, "netty", "float", "comm", "allgather", 1020, 1, 1),
                Fixtures.row(3, "netty", "float", "comm", "reducescatter", 1020, 1, 2),
                Fixtures.row(3, "netty", "float", "comm", "reduce", 1024, 1, 2),
                // A forced all-reduce algorithm is another label: not compared.
                Fixtures.row(3, "netty", "float", "comm-ring", "broadcast", 1024, 1, 3));
        String expected = """

                **World size 3, float, Communicator** (busbw ringstar ÷ busbw Open MPI; allgather and reducescatter \
                at the size rounded down to whole elements per rank)

                | size | allreduce ÷ Allreduce, Netty ÷ tcp | allgather ÷ Allgather, Netty ÷ tcp \
                | reducescatter ÷ Reduce_scatter_block, Netty ÷ tcp | reduce ÷ Reduce, Netty ÷ tcp |
                |---:|---:|---:|---:|---:|
                | 1 KiB | 0.5 | 0.25 | 2 | 0.25 |
                """;
        assertEquals(expected, MpiRatioTables.render(rows));
        assertEquals(15, MpiRatioTables.COMMUNICATOR_PAIRS.size(), "five ops over three transports");
    }

    @Test
    void aRoundedSizeSharesThePowerOfTwosRow() {
        assertEquals(1024, MpiRatioTables.sizeRow(1020));
        assertEquals(1024, MpiRatioTables.sizeRow(1024));
        assertEquals(16, MpiRatioTables.sizeRow(12));
        assertEquals(4L << 20, MpiRatioTables.sizeRow((4L << 20) - 4));
        assertEquals(1, MpiRatioTables.sizeRow(1));
    }

    @Test
    void withoutOpenMpiRowsThereIsNoTable() {
        assertEquals("", MpiRatioTables.render(List.of(Fixtures.row(2, "netty", "float", "ring", "reduce", 4, 1, 1))));
        assertEquals("", MpiRatioTables.render(List.of()));
    }

    @Test
    void aZeroOpenMpiBusbwIsNoRatio() {
        ResultRow ring = Fixtures.row(2, "netty", "float", "ring", "reduce", 4, 1, 1);
        assertEquals("", MpiRatioTables.cell(ring, Fixtures.row(2, "mpi-tcp", "float", "mpi", "reduce", 4, 1, 0)));
        assertEquals("1e+03", MpiRatioTables.cell(ring, Fixtures.row(2, "mpi-tcp", "float", "mpi", "reduce", 4, 1,
                0.001)));
    }
}
