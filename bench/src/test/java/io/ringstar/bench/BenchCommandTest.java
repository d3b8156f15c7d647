package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.cli.BenchCommand;
import io.ringstar.cli.CapturedOutput;
import io.ringstar.cli.Main;
import io.ringstar.spi.LoopbackPorts;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.shade.jackson.databind.JsonNode;
import org.nd4j.shade.jackson.databind.ObjectMapper;

/**
 * The bench's sweep, files and agreement between ranks. Groups run as threads of this JVM: over
 * the in-process transport mostly, over Netty and Aeron once, and as one rank per "process" (a
 * thread of this test running the command with {@code --rank}) over Netty.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BenchCommandTest {
    private static final String[] SMALL = {"--iters", "3", "--warmup", "1", "--timeout", "30"};

    @TempDir
    Path directory;

    /** One command line's outcome. */
    private record Outcome(int status, String out, String err) {
        String all() {
            return out + err;
        }
    }

    private static Outcome run(Supplier<MemoryMeter> meters, List<String> args) {
        CapturedOutput output = new CapturedOutput();
        List<String> line = new ArrayList<>(List.of("bench"));
        line.addAll(args);
        int status = output.run(new Main(List.of(new BenchCommand(Map.of(), meters))), line.toArray(String[]::new));
        return new Outcome(status, output.out(), output.err());
    }

    private static Outcome run(String... args) {
        List<String> line = new ArrayList<>(List.of(args));
        line.addAll(List.of(SMALL));
        return run(JvmMemoryMeter::new, line);
    }

    private static List<Map<String, String>> readCsv(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertEquals(ResultFile.CSV_HEADER, lines.get(0));
        String[] columns = lines.get(0).split(",");
        List<Map<String, String>> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",", -1);
            assertEquals(columns.length, cells.length, line);
            Map<String, String> row = new HashMap<>();
            for (int i = 0; i < columns.length; i++) {
                row.put(columns[i], cells[i]);
            }
            rows.add(row);
        }
        return rows;
    }

    private static double number(Map<String, String> row, String column) {
        return Double.parseDouble(row.get(column));
    }

    private static void assertClose(double expected, double actual, String what) {
        assertTrue(Math.abs(expected - actual) <= 1e-5 * Math.abs(expected), what + ": " + expected + " vs " + actual);
    }

    private static long tableRows(String out) {
        return out.lines().filter(line -> line.trim().matches("\\d+ .*")).count();
    }

    @Test
    void usageErrorsExitWith2AndNameTheFlag() {
        Outcome type = run("--type", "half");
        assertEquals(2, type.status());
        assertTrue(type.err().contains("--type must be one of float|double|both, was 'half'"), type.err());
        Outcome emptyTransport = run("--transport", "inproc,,netty");
        assertEquals(2, emptyTransport.status());
        assertTrue(emptyTransport.err().contains("--transport takes transports separated by commas, each once"),
                emptyTransport.err());
        assertEquals(2, run("--transport", "netty,netty").status());
        Outcome unknown = run("--transport", "inproc,pigeon");
        assertEquals(2, unknown.status());
        assertTrue(unknown.err().contains("transport 'pigeon'"), unknown.err());
        Outcome listWithRank = run("--transport", "inproc,netty", "--rank", "0", "--world-size", "2",
                "--coordinator", "127.0.0.1:1");
        assertEquals(2, listWithRank.status());
        assertTrue(listWithRank.err().contains("a list is for ranks as threads"), listWithRank.err());
        Outcome extension = run("--output", directory.resolve("rows.txt").toString());
        assertEquals(2, extension.status());
        assertTrue(extension.err().contains("must end in .csv or .json"), extension.err());
        Outcome missingDirectory = run("--output", directory.resolve("no/such/rows.csv").toString());
        assertEquals(2, missingDirectory.status());
        assertTrue(missingDirectory.err().contains("does not exist"), missingDirectory.err());
        Outcome plot = run("--plot", directory.resolve("chart.jpg").toString());
        assertEquals(2, plot.status());
        assertTrue(plot.err().contains("--plot") && plot.err().contains(".png"), plot.err());
        // None of them got as far as forming a group.
        List<Outcome> refused = List.of(type, emptyTransport, unknown, listWithRank, extension, missingDirectory, plot);
        for (Outcome outcome : refused) {
            assertFalse(outcome.out().contains("# config:"), outcome.out());
        }
    }

    @Test
    void helpNamesEveryFlagAndEveryColumn() {
        Outcome help = run(JvmMemoryMeter::new, List.of("--help"));
        assertEquals(0, help.status());
        for (String flag : BenchCommand.FLAGS) {
            assertTrue(help.out().contains(" " + flag + "="), flag + " in\n" + help.out());
        }
        for (String column : ResultFile.CSV_HEADER.split(",")) {
            assertTrue(help.out().matches("(?s).*\\b" + column + "\\b.*"), column + " in\n" + help.out());
        }
    }

    @Test
    void percentilesAreNearestRank() {
        assertEquals(3, BenchRow.percentile(new long[] {5, 1, 4, 2, 3}, 50));
        assertEquals(5, BenchRow.percentile(new long[] {5, 1, 4, 2, 3}, 99));
        long[] hundredAndOne = new long[101];
        for (int i = 0; i < hundredAndOne.length; i++) {
            hundredAndOne[i] = 1000 - i;
        }
        assertEquals(950, BenchRow.percentile(hundredAndOne, 50)); // the 51st smallest of 900..1000
        assertEquals(999, BenchRow.percentile(hundredAndOne, 99)); // the 100th smallest
        // Above 2048 ns the histogram keeps 3 significant digits: within 0.1% of the exact value.
        long[] slow = {1_000_000, 2_000_000, 3_000_000, 4_000_000, 5_000_000};
        assertEquals(3_000_000, BenchRow.percentile(slow, 50), 3_000);
        assertEquals(5_000_000, BenchRow.percentile(slow, 99), 5_000);
        // The histogram's bucket may end above every time measured: the slowest call caps it.
        assertEquals(1_234_567, BenchRow.percentile(new long[] {1_000_000, 1_234_567}, 99));
        assertEquals(1, BenchRow.percentile(new long[] {0, 0}, 50), "at least 1 ns, so that bandwidths stay finite");
    }

    @Test
    void csvHasTheContractsColumnsAndConsistentValues() throws IOException {
        Path csv = directory.resolve("rows.csv");
        Outcome outcome = run("--transport", "inproc", "--world-size", "3", "--type", "both", "--op", "all",
                "--max-bytes", "64", "--output", csv.toString());
        assertEquals(0, outcome.status(), outcome.all());
        List<Map<String, String>> rows = readCsv(csv);
        // float: 4..64 B (5 sizes), double: 8..64 B (4 sizes); two algorithms, three operations each.
        assertEquals((5 + 4) * 2 * 3, rows.size());
        assertEquals(rows.size(), tableRows(outcome.out()), outcome.out());
        Set<String> seen = new HashSet<>();
        for (Map<String, String> row : rows) {
            String key = row.get("type") + " " + row.get("algorithm") + " " + row.get("op") + " "
                    + row.get("size_bytes");
            assertTrue(seen.add(key), "one row per type, algorithm, op and size: " + key);
            assertEquals("3", row.get("world_size"));
            assertEquals("threads", row.get("placement"));
            assertEquals("inproc", row.get("transport"));
            assertEquals("3", row.get("iters"));
            assertEquals("0", row.get("wrong"), row.toString());
            long size = Long.parseLong(row.get("size_bytes"));
            assertEquals(size / (row.get("type").equals("float") ? 4 : 8), Long.parseLong(row.get("count")));
            double p50 = number(row, "time_p50_us");
            assertTrue(p50 > 0 && number(row, "time_p99_us") >= p50, row.toString());
            double factor = row.get("op").startsWith("reduce") ? 2.0 * 2 / 3 : 1.0;
            assertClose(factor, number(row, "bus_factor"), "bus factor");
            assertClose(size / (p50 * 1e3), number(row, "algbw_gbps"), "algbw = size / p50");
            assertClose(number(row, "algbw_gbps") * factor, number(row, "busbw_gbps"), "busbw = algbw x factor");
            assertTrue(number(row, "heap_peak_bytes") > 0 && number(row, "offheap_peak_bytes") > 0, row.toString());
            assertCountedPerCall(row);
        }
        assertTrue(outcome.out().contains("# wrote 54 rows to " + csv), outcome.out());
    }

    /**
     * The accounting columns parse and are sane: nothing negative, and the calls cost their thread
     * some CPU time. (The process's may read 0 over a row this short: its threads' schedstat moves
     * at scheduler ticks; ResourceCountersTest sees it move over a longer busy loop.)
     */
    private static void assertCountedPerCall(Map<String, String> row) {
        if (!Files.isReadable(Path.of("/proc/thread-self/stat"))) {
            ResultFile.ACCOUNTING_COLUMNS.forEach(column -> assertEquals("", row.get(column), column));
            return;
        }
        for (String column : ResultFile.ACCOUNTING_COLUMNS) {
            assertTrue(number(row, column) >= 0, column + " in " + row);
        }
        assertTrue(number(row, "thread_cpu_us") > 0, row.toString());
    }

    @Test
    void jsonParsesAndThePlotIsAPng() throws IOException {
        Path json = directory.resolve("rows.json");
        Path png = directory.resolve("busbw.png");
        Outcome outcome = run("--transport", "inproc", "--world-size", "3", "--algorithm", "ring", "--max-bytes", "1K",
                "--output", json.toString(), "--plot", png.toString());
        assertEquals(0, outcome.status(), outcome.all());
        JsonNode document = new ObjectMapper().readTree(json.toFile());
        assertEquals(3, document.get("meta").get("world_size").asInt());
        assertEquals("jvm", document.get("meta").get("memory_per").asText());
        assertEquals(3, document.get("meta").get("iters").asInt());
        assertEquals(1024, document.get("meta").get("max_bytes").asLong());
        JsonNode rows = document.get("rows");
        assertEquals(9, rows.size()); // 4 B .. 1 KiB
        List<String> keys = new ArrayList<>();
        rows.get(0).fieldNames().forEachRemaining(keys::add);
        List<String> expected = new ArrayList<>(Arrays.asList(ResultFile.CSV_HEADER.split(",")));
        expected.addAll(List.of("heap_peak_bytes_per_rank", "offheap_peak_bytes_per_rank"));
        assertEquals(expected, keys);
        for (JsonNode row : rows) {
            // Ranks as threads share one JVM: one figure, the JVM's, which is also the column's.
            assertEquals(1, row.get("heap_peak_bytes_per_rank").size());
            assertEquals(row.get("heap_peak_bytes").asLong(), row.get("heap_peak_bytes_per_rank").get(0).asLong());
            assertTrue(row.get("offheap_peak_bytes").asLong() > 0, row.toString());
            assertTrue(row.get("busbw_gbps").isNumber() && row.get("busbw_gbps").asDouble() > 0, row.toString());
        }
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(BusBandwidthChart.WIDTH, image.getWidth());
        assertEquals(BusBandwidthChart.HEIGHT, image.getHeight());
    }

    @Test
    void sweepsNettyAndAeronAtThreeRanks() throws IOException {
        Path csv = directory.resolve("rows.csv");
        Outcome outcome = run("--transport", "netty,aeron", "--world-size", "3", "--op", "all", "--min-bytes", "256",
                "--max-bytes", "1K", "--chunk-bytes", "256", "--output", csv.toString());
        assertEquals(0, outcome.status(), outcome.all());
        List<Map<String, String>> rows = readCsv(csv);
        for (String transport : List.of("netty", "aeron")) {
            // 256 B .. 1 KiB, two algorithms, three operations.
            assertEquals(3 * 2 * 3, rows.stream().filter(row -> row.get("transport").equals(transport)).count(),
                    transport);
        }
        assertTrue(rows.stream().allMatch(row -> row.get("wrong").equals("0")), rows.toString());
        assertTrue(outcome.out().contains("# all results right"), outcome.out());
    }

    /** A meter that reports fixed peaks, so the test knows which rank's numbers are which. */
    private record FixedMeter(MemoryMeter.Peaks peaks) implements MemoryMeter {
        @Override
        public void start() {
        }

        @Override
        public Peaks stop() {
            return peaks;
        }

        @Override
        public void close() {
        }
    }

    /** Runs ranks 0..n-1 of one group, each as a command with {@code --rank} on its own thread of this test. */
    private static List<Outcome> runRanks(List<Supplier<MemoryMeter>> meters, List<List<String>> argsPerRank)
            throws Exception {
        int worldSize = argsPerRank.size();
        String coordinator = "127.0.0.1:" + LoopbackPorts.free();
        ExecutorService ranks = Executors.newFixedThreadPool(worldSize);
        try {
            List<Future<Outcome>> outcomes = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                List<String> args = new ArrayList<>(List.of("--rank", Integer.toString(rank), "--world-size",
                        Integer.toString(worldSize), "--transport", "netty", "--coordinator", coordinator,
                        "--timeout", "30"));
                args.addAll(argsPerRank.get(rank));
                Supplier<MemoryMeter> meter = meters.get(rank);
                outcomes.add(ranks.submit(() -> run(meter, args)));
            }
            List<Outcome> results = new ArrayList<>();
            for (Future<Outcome> outcome : outcomes) {
                results.add(outcome.get(100, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            ranks.shutdownNow();
        }
    }

    @Test
    void withOneRankPerProcessRankZeroReportsEveryRanksMemory() throws Exception {
        // Rank 1's peaks are known and above 2^32, so the gather must place and round them exactly;
        // ranks 0 and 2 measure for real.
        MemoryMeter.Peaks rankOne = new MemoryMeter.Peaks(5_000_000_123L, 7_000_000_000_001L);
        List<Supplier<MemoryMeter>> meters = List.of(JvmMemoryMeter::new, () -> new FixedMeter(rankOne),
                JvmMemoryMeter::new);
        List<List<String>> args = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            args.add(List.of("--max-bytes", "64", "--min-bytes", "32", "--iters", "2", "--warmup", "1", "--output",
                    directory.resolve("rank" + rank + ".json").toString()));
        }
        List<Outcome> outcomes = runRanks(meters, args);
        for (Outcome outcome : outcomes) {
            assertEquals(0, outcome.status(), outcome.all());
        }
        assertFalse(Files.exists(directory.resolve("rank1.json")) || Files.exists(directory.resolve("rank2.json")),
                "only rank 0 writes the file");
        assertEquals(0, tableRows(outcomes.get(1).out()) + tableRows(outcomes.get(2).out()));
        JsonNode document = new ObjectMapper().readTree(directory.resolve("rank0.json").toFile());
        assertEquals("processes", document.get("meta").get("placement").asText());
        assertEquals("rank", document.get("meta").get("memory_per").asText());
        JsonNode rows = document.get("rows");
        assertEquals(2 * 2, rows.size()); // 32 and 64 B, two algorithms
        for (JsonNode row : rows) {
            JsonNode heap = row.get("heap_peak_bytes_per_rank");
            JsonNode offHeap = row.get("offheap_peak_bytes_per_rank");
            assertEquals(3, heap.size(), row.toString());
            assertEquals(rankOne.heapBytes(), heap.get(1).asLong(), row.toString());
            assertEquals(rankOne.offHeapBytes(), offHeap.get(1).asLong(), row.toString());
            for (int rank : new int[] {0, 2}) {
                assertTrue(heap.get(rank).asLong() > 0 && offHeap.get(rank).asLong() > 0, row.toString());
            }
            // The columns show the largest rank: here rank 1's made-up peaks.
            assertEquals(rankOne.offHeapBytes(), row.get("offheap_peak_bytes").asLong());
        }
        assertTrue(outcomes.get(0).out().contains("#   peak MiB by rank 0..2: heap "), outcomes.get(0).out());
    }

    @Test
    void ranksGivenDifferentItersAllStopWithStatus2() throws Exception {
        List<List<String>> args = List.of(List.of("--max-bytes", "64", "--iters", "3"),
                List.of("--max-bytes", "64", "--iters", "3"), List.of("--max-bytes", "64", "--iters", "5"));
        List<Outcome> outcomes = runRanks(List.of(JvmMemoryMeter::new, JvmMemoryMeter::new, JvmMemoryMeter::new), args);
        for (Outcome outcome : outcomes) {
            assertEquals(2, outcome.status(), outcome.all());
            assertEquals(0, tableRows(outcome.out()), "no row was timed: " + outcome.out());
        }
        assertTrue(outcomes.get(2).err().contains("rank 2 was given other bench flags than rank 0: --iters 5 here but"
                + " 3 on rank 0"), outcomes.get(2).err());
        for (int rank : new int[] {0, 1}) {
            assertTrue(outcomes.get(rank).err().contains("rank 2 was given other bench flags than rank 0"),
                    outcomes.get(rank).err());
        }
    }
}
