package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.cli.CapturedOutput;
import io.ringstar.cli.Main;
import io.ringstar.cli.UsageException;
import io.ringstar.internal.compression.Compression;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.HalfFloats;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** {@code bench --algorithm comm}: its flags, bus factors, sizes and closed forms, and a short sweep. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CommunicatorBenchTest {
    @TempDir
    Path directory;

    @Test
    void busFactorsAreNcclTests() {
        assertEquals(1.5, Operation.ALL_REDUCE.busBandwidthFactor(4));
        assertEquals(1.5, Operation.REDUCE.busBandwidthFactor(4));
        assertEquals(0.75, Operation.ALL_GATHER.busBandwidthFactor(4));
        assertEquals(2.0 / 3, Operation.REDUCE_SCATTER.busBandwidthFactor(3));
        assertEquals(1.0, Operation.COMM_BROADCAST.busBandwidthFactor(4));
        assertEquals(1.0, Operation.COMM_REDUCE.busBandwidthFactor(4));
        assertEquals(0.0, Operation.ALL_GATHER.busBandwidthFactor(1), "one rank moves nothing");
    }

    @Test
    void sizesCountTheFullBufferRoundedToWholeElementsPerRank() {
        // 1 KiB of floats at 3 ranks: 256 elements, 85 per rank.
        assertEquals(85, Operation.ALL_GATHER.inputElements(256, 3));
        assertEquals(255, Operation.ALL_GATHER.rowElements(85, 3), "the gathered result");
        assertEquals(255, Operation.REDUCE_SCATTER.inputElements(256, 3));
        assertEquals(255, Operation.REDUCE_SCATTER.rowElements(255, 3), "the input");
        assertEquals(256, Operation.ALL_REDUCE.inputElements(256, 3));
        assertEquals(0, Operation.ALL_GATHER.inputElements(2, 3), "less than one element per rank");
    }

    /** The closed forms against the result computed the long way from every rank's input. */
    @Test
    void closedFormsMatchTheResultComputedFromTheInputs() {
        int n = 3;
        int m = 1030; // past the pattern's period, so the wrap is covered
        for (int rank = 0; rank < n; rank++) {
            for (int i = 0; i < n * m; i++) {
                double sum = 0;
                for (int r = 0; r < n; r++) {
                    sum += ClosedFormPattern.value(r, i);
                }
                assertEquals(sum / n, ClosedFormPattern.expected(Operation.ALL_REDUCE, n, rank, n * m, i));
                assertEquals(rank == 0 ? sum / n : ClosedFormPattern.value(rank, i),
                        ClosedFormPattern.expected(Operation.COMM_REDUCE, n, rank, n * m, i));
                assertEquals(ClosedFormPattern.value(0, i),
                        ClosedFormPattern.expected(Operation.COMM_BROADCAST, n, rank, n * m, i));
                // All-gather: element i of the [n, m] result is rank i / m's element i mod m.
                assertEquals(ClosedFormPattern.value(i / m, i % m),
                        ClosedFormPattern.expected(Operation.ALL_GATHER, n, rank, m, i));
            }
            for (int i = 0; i < m; i++) {
                double sum = 0;
                for (int r = 0; r < n; r++) {
                    sum += ClosedFormPattern.value(r, rank * m + i);
                }
                assertEquals(sum / n, ClosedFormPattern.expected(Operation.REDUCE_SCATTER, n, rank, n * m, i));
            }
        }
    }

    @Test
    void halfPrecisionAveragesAreRightWithinTheBoundAndTopKIsNotChecked() {
        // Four ranks: averages from 1.5 to 2.5, so those above 2 lose their last bit in binary16.
        int n = 4;
        int count = 2000;
        INDArray average = Nd4j.create(DataType.FLOAT, count);
        try {
            for (int i = 0; i < count; i++) {
                double exact = ClosedFormPattern.expected(Operation.ALL_REDUCE, n, i);
                average.putScalar(i, HalfFloats.halfToFloat(HalfFloats.floatToHalf((float) exact)));
            }
            Compression fp16 = Compression.parse("fp16");
            assertEquals(0, ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    fp16), "the exact average rounded once to binary16 is within the bound");
            assertTrue(ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    Compression.NONE) > 0, "but it is not the exact average");
            average.putScalar(1500, average.getFloat(1500) * 1.05f);
            assertEquals(1, ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    fp16), "5 % off is past the bound");
            assertEquals(-1, ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    Compression.parse("topk:0.1")));
            assertTrue(ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.BROADCAST, n, 0, count,
                    Compression.parse("topk:0.1")) > 0, "a broadcast is never compressed, so it is checked");
        } finally {
            average.close();
        }
    }

    @Test
    void theControlRingIsNeverCompressed() {
        // Its averages carry every rank's call times and wrong counts (one non-zero term each): in
        // fp16 the times overflowed to infinity, and top-k would drop most of them.
        Map<String, String> control = TransportSweep.controlOptions(Map.of("compression", "topk:0.1",
                "checksum", "crc32c"));
        assertEquals("none", control.get("compression"));
        assertEquals("crc32c", control.get("checksum"), "the other options stay");
        assertEquals("none", TransportSweep.controlOptions(Map.of()).get("compression"));
    }

    @Test
    void countWrongFindsAMisplacedElementAndAWrongLength() {
        int n = 2;
        int m = 5;
        INDArray gathered = ClosedFormPattern.create(ElementType.DOUBLE, 0, n * m);
        try {
            for (int i = 0; i < n * m; i++) {
                gathered.putScalar(i, ClosedFormPattern.value(i / m, i % m));
            }
            assertEquals(0, ClosedFormPattern.countWrong(gathered, ElementType.DOUBLE, Operation.ALL_GATHER, n, 1, m,
                    Compression.NONE));
            gathered.putScalar(7, ClosedFormPattern.value(0, 2));
            assertEquals(1, ClosedFormPattern.countWrong(gathered, ElementType.DOUBLE, Operation.ALL_GATHER, n, 1, m,
                    Compression.NONE));
            assertEquals(10, ClosedFormPattern.countWrong(gathered, ElementType.DOUBLE, Operation.REDUCE_SCATTER, n,
                    1, n * m, Compression.NONE), "a reduce-scatter of 10 elements gives 5 per rank, not 10");
        } finally {
            gathered.close();
        }
    }

    @Test
    void flagsPickTheCommunicatorsOperations() throws UsageException {
        assertEquals(List.of(Operation.ALL_REDUCE), BenchCommand.operations(null, true));
        assertEquals(List.of(Operation.ALL_REDUCE, Operation.ALL_GATHER, Operation.REDUCE_SCATTER,
                Operation.COMM_BROADCAST, Operation.COMM_REDUCE), BenchCommand.operations("all", true));
        assertEquals(List.of(Operation.ALL_GATHER, Operation.COMM_REDUCE),
                BenchCommand.operations("reduce, allgather", true), "declaration order, whatever the flag's");
        // The aggregators' values are unchanged.
        assertEquals(List.of(Operation.REDUCE), BenchCommand.operations(null, false));
        assertEquals(List.of(Operation.REDUCE, Operation.BROADCAST), BenchCommand.operations("all", false));
        UsageException notAggregator = assertThrows(UsageException.class,
                () -> BenchCommand.operations("allgather", false));
        assertTrue(notAggregator.getMessage().contains("--op allgather is a communicator operation: give --algorithm"
                + " comm"), notAggregator.getMessage());
        UsageException unknown = assertThrows(UsageException.class, () -> BenchCommand.operations("allreduce,x", true));
        assertTrue(unknown.getMessage().contains("allreduce|allgather|reducescatter|broadcast|reduce"),
                unknown.getMessage());
        assertThrows(UsageException.class, () -> BenchCommand.operations("reduce,reduce", true));
    }

    @Test
    void theAlgorithmsLabelNamesAForcedAllReduce() throws UsageException {
        BenchSettings auto = BenchCommand.parse(List.of("--algorithm", "comm", "--transport", "inproc"), Map.of());
        assertEquals(List.of(Algorithm.COMM), auto.algorithms());
        assertEquals("comm", auto.algorithmLabel(Algorithm.COMM));
        BenchSettings ring = BenchCommand.parse(List.of("--algorithm", "comm", "--transport", "inproc", "--option",
                "allReduceAlgorithm=ring"), Map.of());
        assertEquals("comm-ring", ring.algorithmLabel(Algorithm.COMM));
        assertEquals("ring", ring.algorithmLabel(Algorithm.RING));
        assertTrue(ring.plan().stream().anyMatch(entry -> entry.flag().equals("--option allReduceAlgorithm")
                && entry.describe(entry.value()).equals("ring")), "the ranks agree on the algorithm too");
        assertEquals(List.of(Algorithm.PS, Algorithm.RING), BenchCommand.parse(List.of("--transport", "inproc"),
                Map.of()).algorithms(), "both is still the two aggregators");
        assertThrows(UsageException.class, () -> Algorithm.chosen("comm", Algorithm.BOTH),
                "train has no communicator algorithm");
        UsageException bogus = assertThrows(UsageException.class, () -> BenchCommand.parse(List.of("--algorithm",
                "comm", "--transport", "inproc", "--option", "allReduceAlgorithm=bogus"), Map.of()));
        assertTrue(bogus.getMessage().contains("must be auto, ring, doubling or star"), bogus.getMessage());
    }

    /** Runs {@code bench} with {@code args} and its CSV output; returns the CSV's rows after checking the status. */
    private List<Map<String, String>> sweep(String... args) throws IOException {
        Path csv = directory.resolve("comm.csv");
        CapturedOutput output = new CapturedOutput();
        List<String> command = new ArrayList<>(List.of("bench"));
        command.addAll(List.of(args));
        command.addAll(List.of("--iters", "3", "--warmup", "1", "--timeout", "30", "--output", csv.toString()));
        int status = output.run(new Main(List.of(new BenchCommand(Map.of()))), command.toArray(String[]::new));
        assertEquals(0, status, output.out() + output.err());
        List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
        String[] columns = lines.get(0).split(",");
        List<Map<String, String>> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",", -1);
            Map<String, String> row = new HashMap<>();
            for (int i = 0; i < columns.length; i++) {
                row.put(columns[i], cells[i]);
            }
            rows.add(row);
        }
        return rows;
    }

    @Test
    void aSweepOfTheCommunicatorIsRightOnEveryRank() throws IOException {
        List<Map<String, String>> rows = sweep("--transport", "inproc", "--world-size", "3", "--algorithm", "comm",
                "--op", "all", "--min-bytes", "8", "--max-bytes", "256");
        List<String> ops = List.of("allreduce", "allgather", "reducescatter", "broadcast", "reduce");
        for (String op : ops) {
            // 8 .. 256 B: 6 sizes, less those that hold no float per rank (8 B at 3 ranks for the per-rank ops).
            long expected = op.equals("allgather") || op.equals("reducescatter") ? 5 : 6;
            assertEquals(expected, rows.stream().filter(row -> row.get("op").equals(op)).count(), op);
        }
        for (Map<String, String> row : rows) {
            // Automatic: recursive doubling at these sizes and 3 ranks.
            assertEquals("comm", row.get("algorithm"));
            assertEquals("0", row.get("wrong"), row.toString());
            long size = Long.parseLong(row.get("size_bytes"));
            assertEquals(size / 4, Long.parseLong(row.get("count")));
            Operation op = Operation.of(true, row.get("op"));
            if (op == Operation.ALL_GATHER || op == Operation.REDUCE_SCATTER) {
                assertEquals(0, size % (3 * 4), "a whole number of floats per rank: " + row);
            }
            assertEquals(op.busBandwidthFactor(3), Double.parseDouble(row.get("bus_factor")), 1e-5);
        }
    }

    /** Over Netty, the ring forced, 4 ranks and messages cut into 256-byte chunks. */
    @Test
    void theRingForcedOverNettyInChunksIsRightToo() throws IOException {
        List<Map<String, String>> rows = sweep("--transport", "netty", "--world-size", "4", "--algorithm", "comm",
                "--op", "all", "--option", "allReduceAlgorithm=ring", "--chunk-bytes", "256", "--min-bytes", "1K",
                "--max-bytes", "4K", "--type", "double");
        assertEquals(5 * 3, rows.size(), "five ops, three sizes: " + rows);
        for (Map<String, String> row : rows) {
            assertEquals("comm-ring", row.get("algorithm"));
            assertEquals("0", row.get("wrong"), row.toString());
        }
    }
}
