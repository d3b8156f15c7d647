package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark scripts run for real at tiny sizes: {@code bench/compare-mpi.sh} (Open MPI's
 * program and ringstar's sweep must write the same CSV columns, with right results) and
 * {@code bench/cluster.sh} (namespaces and ranks must be gone after it ends, also when it is
 * stopped with SIGTERM midway). Open MPI is installed by the script itself when it runs as root;
 * without root and without {@code mpicc}, or without root for the namespaces, the tests skip.
 * Their tables come from {@code ringstar report}: the scripts' report-only modes
 * ({@code --ratios}, {@code --table}, {@code benchmarks.sh --report-only}) run on written files.
 */
@Tag("slow")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class BenchScriptsIT {
    /**
     * The schema of {@code ringstar bench --output x.csv}: Open MPI's program writes these columns,
     * ringstar's bench adds {@link ResultFile#ACCOUNTING_COLUMNS} after them.
     */
    private static final List<String> COLUMNS = List.of("date", "world_size", "placement", "transport", "type",
            "algorithm", "op", "size_bytes", "count", "iters", "time_p50_us", "time_p99_us", "algbw_gbps",
            "busbw_gbps", "bus_factor", "wrong", "heap_peak_bytes", "offheap_peak_bytes");
    private static final List<String> MERGED_COLUMNS = Stream.concat(COLUMNS.stream(),
            ResultFile.ACCOUNTING_COLUMNS.stream()).toList();
    private static final Path ROOT = Paths.get("..").toAbsolutePath().normalize();

    /** How a script ended; {@code pid} names its namespaces ("rs-h0-<pid>"). */
    private record Outcome(int status, String output, long pid) {
    }

    @Test
    void compareMpiWritesOpenMpiAndRingstarRowsInOneSchemaAllRight(@TempDir Path out) throws Exception {
        assumeOpenMpi();
        Outcome outcome = run(List.of(ROOT.resolve("bench/compare-mpi.sh").toString(), "--world-sizes", "3",
                "--max-bytes", "1K", "--type", "float", "--transports", "netty", "--iters", "3", "--warmup", "3",
                "--out", out.toString()), 240);
        assertEquals(0, outcome.status(), outcome.output());

        List<Map<String, String>> rows = readCsv(out.resolve("compare-run1.csv"));
        Map<String, Set<String>> operations = new HashMap<>();
        for (Map<String, String> row : rows) {
            assertEquals("0", row.get("wrong"), "wrong elements in " + row);
            assertEquals("3", row.get("world_size"), row.toString());
            assertEquals("float", row.get("type"), row.toString());
            double size = Double.parseDouble(row.get("size_bytes"));
            double p50 = Double.parseDouble(row.get("time_p50_us"));
            double factor = busFactorAtThree(row.get("algorithm"), row.get("op"));
            assertEquals(factor, Double.parseDouble(row.get("bus_factor")), 1e-5, row.toString());
            // busbw in GB/s is size / p50 * factor; the CSV rounds, so compare to 1%.
            assertEquals(size / (p50 * 1e3) * factor, Double.parseDouble(row.get("busbw_gbps")),
                    size / (p50 * 1e3) * factor * 0.01 + 1e-6, row.toString());
            operations.computeIfAbsent(row.get("transport"), t -> new TreeSet<>())
                    .add(row.get("algorithm") + " " + row.get("op") + " " + row.get("size_bytes"));
        }
        Set<String> mpi = expected(List.of("mpi reduce", "mpi-reduce-bcast reduce", "mpi broadcast",
                "mpi-reduce reduce"));
        mpi.addAll(expectedPerRank(List.of("mpi allgather", "mpi reducescatter")));
        assertEquals(mpi, operations.get("mpi-shm"));
        assertEquals(mpi, operations.get("mpi-tcp"));
        Set<String> netty = expected(List.of("ps reduce", "ps broadcast", "ring reduce", "ring reduceinto",
                "comm allreduce", "comm broadcast", "comm reduce"));
        netty.addAll(expectedPerRank(List.of("comm allgather", "comm reducescatter")));
        assertEquals(netty, operations.get("netty"));

        String ratios = Files.readString(out.resolve("ratios-run1.md"));
        assertTrue(ratios.contains("**World size 3, float**"), ratios);
        for (String size : List.of("4 B", "64 B", "1 KiB")) {
            String line = ratios.lines().filter(l -> l.startsWith("| " + size + " |")).findFirst().orElseThrow(
                    () -> new AssertionError("no row for " + size + " in\n" + ratios));
            // Four ratios for Netty (its defaults, against Open MPI's shared memory): ring / Allreduce, ring
            // into / Allreduce, star / Reduce+Bcast, star broadcast / Bcast.
            List<String> cells = Arrays.stream(line.split("\\|")).map(String::trim).filter(c -> !c.isEmpty())
                    .skip(1).toList();
            assertEquals(4, cells.size(), line);
            cells.forEach(cell -> assertTrue(Double.parseDouble(cell) > 0, line));
        }
        String communicator = "**World size 3, float, Communicator**";
        assertTrue(ratios.contains(communicator), ratios);
        String commTable = ratios.substring(ratios.indexOf(communicator));
        // Allreduce, allgather, reducescatter, broadcast and reduce; allgather and reducescatter at 1020 B (85
        // floats a rank) share the 1 KiB row; at 16 B they move 12 B (one float a rank), and at 4 B nothing.
        for (String size : List.of("1 KiB", "16 B", "4 B")) {
            String line = commTable.lines().filter(l -> l.startsWith("| " + size + " |")).findFirst().orElseThrow(
                    () -> new AssertionError("no row for " + size + " in\n" + commTable));
            List<String> cells = Arrays.stream(line.split("\\|")).map(String::trim).filter(c -> !c.isEmpty())
                    .skip(1).toList();
            assertEquals(size.equals("4 B") ? 3 : 5, cells.size(), line);
            cells.forEach(cell -> assertTrue(Double.parseDouble(cell) > 0, line));
        }
    }

    /** nccl-tests' bus factor at 3 ranks for a row of compare-mpi.sh's CSV. */
    private static double busFactorAtThree(String algorithm, String op) {
        return switch (op) {
            case "allreduce" -> 4.0 / 3;
            case "allgather", "reducescatter" -> 2.0 / 3;
            // The communicator's reduce and Open MPI's MPI_Reduce go to one root; reduceGradients (and
            // reduceGradientsInto) is an all-reduce.
            case "reduce" -> algorithm.equals("comm") || algorithm.equals("mpi-reduce") ? 1 : 4.0 / 3;
            case "reduceinto" -> 4.0 / 3;
            default -> 1;
        };
    }

    @Test
    void clusterMeasuresBothAlgorithmsAndLeavesNoNamespaceBehind(@TempDir Path out) throws Exception {
        assumeNamespaces();
        Outcome outcome = run(List.of(ROOT.resolve("bench/cluster.sh").toString(), "--world-sizes", "2",
                "--min-bytes", "1K", "--max-bytes", "8K", "--iters", "3", "--warmup", "1", "--rate", "100mbit",
                "--out", out.toString()), 240);
        assertEquals(0, outcome.status(), outcome.output());
        List<Map<String, String>> rows = readCsv(out.resolve("cluster.csv"));
        Set<String> measured = rows.stream().peek(row -> assertEquals("0", row.get("wrong"), row.toString()))
                .map(row -> row.get("algorithm") + " " + row.get("size_bytes")).collect(Collectors.toSet());
        assertEquals(Set.of("ps 1024", "ring 1024", "ps 2048", "ring 2048", "ps 4096", "ring 4096", "ps 8192",
                "ring 8192"), measured);
        String table = Files.readString(out.resolve("cluster.md"));
        assertTrue(table.contains("| 8 KiB |") && table.contains("- n=2 netty float: "), table);
        assertEquals("", namespacesOf(outcome.pid()), "namespaces left behind");
    }

    @Test
    void clusterStoppedMidwayRemovesItsNamespacesAndRanks(@TempDir Path out) throws Exception {
        assumeNamespaces();
        Path log = out.resolve("cluster.log");
        // Two ranks: the script makes all five namespaces whatever the world size, and two rank JVMs
        // show that every rank is stopped as well as four did.
        Process script = new ProcessBuilder(ROOT.resolve("bench/cluster.sh").toString(), "--world-sizes", "2",
                "--max-bytes", "1M", "--out", out.toString()).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            // Stopped once rank 0 has printed its configuration: every namespace and rank exists then.
            while (!Files.readString(log).contains("# config: rank 0")) {
                assertTrue(script.isAlive(), "cluster.sh ended early:\n" + Files.readString(log));
                assertTrue(System.nanoTime() < deadline, "rank 0 never started:\n" + Files.readString(log));
                Thread.sleep(100);
            }
            assertTrue(!namespacesOf(script.pid()).isEmpty(), "no namespaces of cluster.sh while it runs");
            List<ProcessHandle> ranks = script.descendants().toList();
            assertTrue(ranks.size() >= 2, "rank processes: " + ranks);
            script.destroy();
            assertTrue(script.waitFor(30, TimeUnit.SECONDS), "cluster.sh did not end within 30 s of SIGTERM");
            assertEquals("", namespacesOf(script.pid()), "namespaces left behind");
            for (ProcessHandle rank : ranks) {
                try {
                    rank.onExit().get(10, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    fail("still running 10 s after cluster.sh ended: " + rank.info());
                }
            }
        } finally {
            script.descendants().forEach(ProcessHandle::destroyForcibly);
            script.destroyForcibly();
        }
    }

    /**
     * A failed Aeron IPC run fails the script, although its function runs where set -e does not act;
     * Open MPI's rows are still written, and the shared media driver's directory is gone.
     */
    @Test
    void compareMpiExitsOneWhenAeronIpcFails(@TempDir Path out) throws Exception {
        assumeOpenMpi();
        // Every rank refuses an option that no transport declares, so every Aeron IPC launch fails at once.
        // One warm-up call: Open MPI's rows only have to be written (the automatic warm-up, sized for
        // measuring, took 18 of this case's 26 s).
        Outcome outcome = run(List.of(ROOT.resolve("bench/compare-mpi.sh").toString(), "--world-sizes", "2",
                "--max-bytes", "16", "--type", "float", "--transports", "aeron-ipc", "--iters", "3", "--warmup", "1",
                "--out", out.toString()), Map.of("AERON_OPTS", "--option aeron.noSuchOption=1"), 240);
        assertEquals(1, outcome.status(), outcome.output());
        assertTrue(outcome.output().contains("ringstar over aeron-ipc at world size 2, ps reduce,broadcast, failed"),
                outcome.output());
        Set<String> transports = readCsv(out.resolve("compare-run1.csv")).stream().map(row -> row.get("transport"))
                .collect(Collectors.toSet());
        assertEquals(Set.of("mpi-shm", "mpi-tcp"), transports);
        assertTrue(Files.notExists(Paths.get("/dev/shm/ringstar-compare-" + outcome.pid())),
                "the shared media driver's directory was left behind");
    }

    /** A result row of {@link #COLUMNS} with the fields the tables read. */
    private static String row(int worldSize, String transport, String algorithm, String op, long size, double p50,
            double busbw) {
        return String.format(Locale.ROOT, "2026-11-26T11:31:57Z,%d,threads,%s,float,%s,%s,%d,1,20,%s,%s,%s,%s,1,0,0,0",
                worldSize, transport, algorithm, op, size, p50, 2 * p50, busbw, busbw);
    }

    private static Path writeCsv(Path file, String... rows) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, String.join(",", COLUMNS) + "\n" + String.join("\n", rows) + "\n");
        return file;
    }

    /** The report-only flags of compare-mpi.sh and cluster.sh print `ringstar report`'s tables of a CSV. */
    @Test
    void ratiosAndTableFlagsPrintTheTablesOfAFile(@TempDir Path dir) throws Exception {
        Path tcp = writeCsv(dir.resolve("tcp.csv"), row(2, "mpi-tcp", "mpi", "reduce", 1024, 5, 0.4),
                row(2, "netty-tcp", "ring", "reduce", 1024, 10, 0.2),
                row(2, "netty-tcp", "ps", "reduce", 1024, 30, 0.1),
                row(2, "mpi-tcp", "mpi-reduce-bcast", "reduce", 1024, 5, 0.5));
        Outcome ratios = run(List.of(ROOT.resolve("bench/compare-mpi.sh").toString(), "--ratios", tcp.toString()), 60);
        assertEquals(0, ratios.status(), ratios.output());
        assertTrue(ratios.output().startsWith("""

                **World size 2, float** (busbw ringstar ÷ busbw Open MPI)

                | size | ring ÷ Allreduce, Netty TCP ÷ tcp | star ÷ Reduce+Bcast, Netty TCP ÷ tcp |
                |---:|---:|---:|
                | 1 KiB | 0.5 | 0.2 |

                **Issue 28's targets**"""), ratios.output());
        assertTrue(ratios.output().contains("| reduceGradients | at 1 KiB | time ≤ 3× | 10 µs vs 5 µs (2×) | yes |"),
                ratios.output());
        Path csv = writeCsv(dir.resolve("all.csv"), row(2, "netty", "ring", "reduce", 1024, 10, 0.2),
                row(2, "netty", "ps", "reduce", 1024, 30, 0.1));
        Outcome table = run(List.of(ROOT.resolve("bench/cluster.sh").toString(), "--table", csv.toString(), "--rate",
                "1gbit"), 60);
        assertEquals(0, table.status(), table.output());
        assertEquals("""
                | size | n=2 netty float: star ÷ ring |
                |---:|---:|
                | 1 KiB | 3.00 |

                - n=2 netty float: the ring is faster at every size measured (1 KiB to 1 KiB); star ÷ ring at 1 KiB \
                is 3.00 (n/2 = 1.0); the ring's busbw there is 160% of the link rate
                """, table.output());
    }

    /** An unknown flag, or a flag without its value, prints the script's usage and exits 2. */
    @Test
    void everyScriptRefusesAnUnknownFlagWithItsUsage() throws Exception {
        for (String script : List.of("benchmarks.sh", "compare-mpi.sh", "cluster.sh")) {
            // --max-bytes is a flag of all three; here it lacks its value.
            for (List<String> flags : List.of(List.of("--no-such-flag", "1"), List.of("--max-bytes"))) {
                List<String> command = new ArrayList<>(List.of(ROOT.resolve("bench/" + script).toString()));
                command.addAll(flags);
                Outcome outcome = run(command, 30);
                assertEquals(2, outcome.status(), script + " " + flags + ": " + outcome.output());
                assertTrue(outcome.output().contains("Usage: bench/" + script), outcome.output());
            }
        }
    }

    /**
     * benchmarks.sh --quick --report-only writes the quick report from the quick run's files, all its
     * tables from `ringstar report`, and exits 1 because a step of that run failed. A real quick run's
     * files are moved aside and put back.
     */
    @Test
    void reportOnlyWritesTheReportFromTheRunsFiles() throws Exception {
        Path quick = ROOT.resolve("bench/target/benchmarks-quick");
        Path aside = ROOT.resolve("bench/target/benchmarks-quick.aside-" + ProcessHandle.current().pid());
        boolean moved = Files.exists(quick);
        if (moved) {
            Files.move(quick, aside);
        }
        try {
            Path results = quick.resolve("results");
            Files.createDirectories(results);
            // Started 2026-11-26 11:31:31 UTC, one minute long.
            Files.writeString(results.resolve("run.txt"), String.join("\n", "1795692691", "1795692751",
                    "1.00 1.00 1.00", "2.00 2.00 2.00", "--quick", "4", "2,3", "float", "1gbit") + "\n");
            Files.writeString(results.resolve("steps.txt"), "sweep-float\tjava -jar x.jar bench\t30\t0\n"
                    + "compare-mpi\tbench/compare-mpi.sh --runs 1\t20\t1\n");
            writeCsv(results.resolve("sweep.csv"), row(4, "inproc", "ring", "reduce", 1024, 10, 0.5),
                    row(4, "inproc", "ps", "reduce", 1024, 20, 0.25));
            writeCsv(results.resolve("compare-mpi/compare-run1.csv"), row(2, "mpi-tcp", "mpi", "reduce", 1024, 5, 0.4),
                    row(2, "netty-tcp", "ring", "reduce", 1024, 10, 0.2));
            Outcome outcome = run(List.of(ROOT.resolve("bench/benchmarks.sh").toString(), "--quick", "--report-only"),
                    60);
            assertEquals(1, outcome.status(), outcome.output());
            assertTrue(outcome.output().contains("step compare-mpi failed"), outcome.output());
            String report = Files.readString(quick.resolve("BENCHMARKS.md"));
            for (String expected : List.of(
                    "Generated by `bench/benchmarks.sh --quick` on 2026-11-26 11:31 UTC,\nin 1 min 0 s.",
                    "| compare-mpi | `bench/compare-mpi.sh --runs 1` | FAILED (status 1) after 20 s; see "
                            + "bench/target/benchmarks-quick/benchmarks.log |",
                    "| size | inproc ring reduce | inproc ps reduce |\n|---:|---:|---:|\n| 1 KiB | 0.5 | 0.25 |\n",
                    "| 1 KiB | 2.00 |\n\n- n=4 inproc float: the ring is faster at every size measured",
                    "| size | ring ÷ Allreduce, Netty TCP ÷ tcp |\n|---:|---:|\n| 1 KiB | 0.5 |\n",
                    "No results: JMH wrote no CSV.", "The sweep runs 4 ranks, compare-mpi.sh up to\n  3 processes")) {
                assertTrue(report.contains(expected), "no\n" + expected + "\nin\n" + report);
            }
        } finally {
            deleteTree(quick);
            if (moved) {
                Files.move(aside, quick);
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (Files.exists(root)) {
            try (var paths = Files.walk(root)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(path);
                }
            }
        }
    }

    private static void assumeOpenMpi() throws IOException, InterruptedException {
        boolean root = "0".equals(run(List.of("id", "-u"), 10).output().trim());
        Assumptions.assumeTrue(root || Files.isExecutable(Paths.get("/usr/bin/mpicc")),
                "needs Open MPI's mpicc, or root to install it (Debian: openmpi-bin libopenmpi-dev)");
    }

    private static void assumeNamespaces() throws IOException, InterruptedException {
        boolean root = "0".equals(run(List.of("id", "-u"), 10).output().trim());
        Assumptions.assumeTrue(root && Files.isExecutable(Paths.get("/usr/sbin/tc")),
                "needs root and iproute2 (ip, tc) for network namespaces");
    }

    /** The namespaces of the script with process id {@code pid}, one per line. */
    private static String namespacesOf(long pid) throws IOException, InterruptedException {
        return run(List.of("ip", "netns", "list"), 10).output().lines().map(line -> line.split(" ")[0])
                .filter(name -> name.matches("rs-(h\\d|sw)-" + pid)).collect(Collectors.joining("\n"));
    }

    /** "algorithm op size" for every size 4 B..1 KiB of float and every one of {@code operations}. */
    private static Set<String> expected(List<String> operations) {
        Set<String> expected = new TreeSet<>();
        for (String operation : operations) {
            for (int size = 4; size <= 1024; size *= 2) {
                expected.add(operation + " " + size);
            }
        }
        return expected;
    }

    /** All-gather's and reduce-scatter's rows at 3 ranks: 4 B .. 1 KiB of floats rounded down to 3 floats a rank. */
    private static Set<String> expectedPerRank(List<String> operations) {
        Set<String> expected = new TreeSet<>();
        for (String operation : operations) {
            for (int size = 4; size <= 1024; size *= 2) {
                int perRank = size / Float.BYTES / 3;
                if (perRank > 0) {
                    expected.add(operation + " " + perRank * 3 * Float.BYTES);
                }
            }
        }
        return expected;
    }

    private static List<Map<String, String>> readCsv(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        List<String> header = List.of(lines.get(0).split(",", -1));
        assertTrue(header.equals(COLUMNS) || header.equals(MERGED_COLUMNS), "the header of " + file + ": " + header);
        List<Map<String, String>> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",", -1);
            assertEquals(header.size(), cells.length, line);
            Map<String, String> row = new HashMap<>();
            for (int i = 0; i < cells.length; i++) {
                row.put(header.get(i), cells[i]);
            }
            rows.add(row);
        }
        assertTrue(rows.size() > 0, "no rows in " + file);
        return rows;
    }

    /** Runs {@code command} to its end within {@code seconds}; output to a file, for the reason LauncherIT gives. */
    private static Outcome run(List<String> command, int seconds) throws IOException, InterruptedException {
        return run(command, Map.of(), seconds);
    }

    /** As {@link #run(List, int)}, with {@code environment} added to this process's. */
    private static Outcome run(List<String> command, Map<String, String> environment, int seconds)
            throws IOException, InterruptedException {
        Path output = Files.createTempFile("bench-scripts-it-", ".out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().putAll(environment);
        Process process = builder.start();
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroy();
                process.waitFor(30, TimeUnit.SECONDS);
                fail("not finished within " + seconds + " s: " + command + "; output:\n"
                        + Files.readString(output, StandardCharsets.UTF_8));
            }
            return new Outcome(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8), process.pid());
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            Files.deleteIfExists(output);
        }
    }
}
