package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.bench.BenchSettings;
import io.ringstar.bench.Operation;
import io.ringstar.ranks.Algorithm;
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

/** {@code bench --algorithm comm} on the command line: its flags, and short sweeps. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CommunicatorCommandTest {
    @TempDir
    Path directory;

    @Test
    void flagsPickTheCommunicatorsOperations() throws UsageException {
        assertEquals(List.of(Operation.ALL_REDUCE), BenchCommand.operations(null, true));
        assertEquals(List.of(Operation.ALL_REDUCE, Operation.ALL_GATHER, Operation.REDUCE_SCATTER,
                Operation.COMM_BROADCAST, Operation.COMM_REDUCE), BenchCommand.operations("all", true));
        assertEquals(List.of(Operation.ALL_GATHER, Operation.COMM_REDUCE),
                BenchCommand.operations("reduce, allgather", true), "declaration order, whatever the flag's");
        // The aggregators': reduce by default; lists in declaration order too.
        assertEquals(List.of(Operation.REDUCE), BenchCommand.operations(null, false));
        assertEquals(List.of(Operation.REDUCE, Operation.REDUCE_INTO, Operation.BROADCAST),
                BenchCommand.operations("all", false));
        assertEquals(List.of(Operation.REDUCE_INTO, Operation.BROADCAST),
                BenchCommand.operations("broadcast,reduceinto", false));
        UsageException unknownAggregatorOp = assertThrows(UsageException.class,
                () -> BenchCommand.operations("reduce,x", false));
        assertTrue(unknownAggregatorOp.getMessage().contains("reduce|reduceinto|broadcast"),
                unknownAggregatorOp.getMessage());
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
        assertThrows(UsageException.class, () -> FlagValues.algorithms("comm", Algorithm.BOTH, false),
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
