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
                Fixtures.row(2, "netty-tcp", "float", "ring", "reduce", 4, 1, 1),
                Fixtures.row(2, "netty-tcp", "float", "ring", "reduce", 1024, 1, 1),
                new ResultRow(2, "netty-tcp", "float", "ps", "reduce", 4, 1, 1, 1, 2),
                // Netty with its defaults uses shared memory on one host: it meets Open MPI's, which is missing.
                Fixtures.row(2, "netty", "float", "ring", "reduce", 4, 1, 1),
                // No Open MPI row over shared memory: no Aeron IPC column.
                Fixtures.row(2, "aeron-ipc", "float", "ring", "reduce", 4, 1, 1),
                // Another world size and type: their own table.
                Fixtures.row(3, "mpi-shm", "double", "mpi", "broadcast", 8, 1, 2),
                Fixtures.row(3, "netty", "double", "ps", "broadcast", 8, 1, 1));
        String expected = """

                **World size 2, float** (busbw ringstar ÷ busbw Open MPI)

                | size | ring ÷ Allreduce, Netty TCP ÷ tcp | star ÷ Reduce+Bcast, Netty TCP ÷ tcp |
                |---:|---:|---:|
                | 4 B | 2 | wrong |
                | 1 KiB | 0.333 |  |

                **World size 3, double** (busbw ringstar ÷ busbw Open MPI)

                | size | star bcast ÷ Bcast, Netty ÷ shm |
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
                Fixtures.row(3, "netty-tcp", "float", "comm", "allreduce", 1024, 1, 1),
                Fixtures.row(3, "netty-tcp", "float", "comm", "allgather", 1020, 1, 1),
                Fixtures.row(3, "netty-tcp", "float", "comm", "reducescatter", 1020, 1, 2),
                Fixtures.row(3, "netty-tcp", "float", "comm", "reduce", 1024, 1, 2),
                // A forced all-reduce algorithm is another label: not compared.
                Fixtures.row(3, "netty", "float", "comm-ring", "broadcast", 1024, 1, 3));
        String expected = """

                **World size 3, float, Communicator** (busbw ringstar ÷ busbw Open MPI; allgather and reducescatter \
                at the size rounded down to whole elements per rank)

                | size | allreduce ÷ Allreduce, Netty TCP ÷ tcp | allgather ÷ Allgather, Netty TCP ÷ tcp \
                | reducescatter ÷ Reduce_scatter_block, Netty TCP ÷ tcp | reduce ÷ Reduce, Netty TCP ÷ tcp |
                |---:|---:|---:|---:|---:|
                | 1 KiB | 0.5 | 0.25 | 2 | 0.25 |
                """;
        assertEquals(expected, MpiRatioTables.render(rows));
        assertEquals(20, MpiRatioTables.COMMUNICATOR_PAIRS.size(), "five ops over four transports");
    }

    @Test
    void reduceGradientsIntoMeetsAllreduceAndNettysDefaultMeetsSharedMemory() {
        List<ResultRow> rows = List.of(
                Fixtures.row(2, "mpi-shm", "float", "mpi", "reduce", 1024, 1, 4),
                Fixtures.row(2, "netty", "float", "ring", "reduce", 1024, 1, 1),
                Fixtures.row(2, "netty", "float", "ring", "reduceinto", 1024, 1, 2),
                Fixtures.row(2, "aeron-ipc", "float", "ring", "reduceinto", 1024, 1, 3));
        String expected = """

                **World size 2, float** (busbw ringstar ÷ busbw Open MPI)

                | size | ring ÷ Allreduce, Netty ÷ shm | ring into ÷ Allreduce, Netty ÷ shm \
                | ring into ÷ Allreduce, Aeron IPC ÷ shm |
                |---:|---:|---:|---:|
                | 1 KiB | 0.25 | 0.5 | 0.75 |
                """;
        assertEquals(expected, MpiRatioTables.render(rows));
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
