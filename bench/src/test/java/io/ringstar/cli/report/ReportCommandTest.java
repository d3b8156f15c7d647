package io.ringstar.cli.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.bench.ResultFile;
import io.ringstar.bench.report.Fixtures;
import io.ringstar.bench.report.ResultRow;
import io.ringstar.bench.report.RunRecordTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ReportCommandTest {
    @TempDir
    Path dir;

    /** How a command line ended: its status and what it wrote. */
    private record Outcome(int status, String out, String err) {
    }

    private static Outcome run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = new CommandLine(new ReportCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
                .execute(args);
        return new Outcome(status, out.toString(), err.toString());
    }

    private Path sample(String name, long wrong) {
        return Fixtures.csv(dir.resolve(name), List.of(
                Fixtures.line(2, "netty", "float", "ps", "reduce", 1024, 20, 30, 0.1, wrong),
                Fixtures.line(2, "netty", "float", "ring", "reduce", 1024, 10, 30, 0.2, 0),
                Fixtures.line(2, "mpi-tcp", "float", "mpi", "reduce", 1024, 5, 30, 0.4, 0),
                Fixtures.line(2, "mpi-tcp", "float", "mpi-reduce-bcast", "reduce", 1024, 5, 30, 0.4, 0)));
    }

    @Test
    void compareMpiPrintsTheRatiosThenTheTargets() {
        Path csv = Fixtures.csv(dir.resolve("all.csv"), List.of(
                Fixtures.line(2, "netty-tcp", "float", "ps", "reduce", 1024, 20, 30, 0.1, 0),
                Fixtures.line(2, "netty-tcp", "float", "ring", "reduce", 1024, 10, 30, 0.2, 0),
                Fixtures.line(2, "mpi-tcp", "float", "mpi", "reduce", 1024, 5, 30, 0.4, 0),
                Fixtures.line(2, "mpi-tcp", "float", "mpi-reduce-bcast", "reduce", 1024, 5, 30, 0.4, 0)));
        Outcome outcome = run("compare-mpi", csv.toString());
        assertEquals(0, outcome.status(), outcome.err());
        assertTrue(outcome.out().contains("| 1 KiB | 0.5 | 0.25 |"), outcome.out());
        assertTrue(outcome.out().contains("| 2 | TCP (sharedMemory=off) ÷ Open MPI TCP | reduceGradients | at 1 KiB"
                + " | time ≤ 3× | 10 µs vs 5 µs (2×) | yes |"), outcome.out());
    }

    @Test
    void clusterPrintsStarOverRingAndOptionallyOpenMpi() {
        Outcome outcome = run("cluster", sample("cluster.csv", 0).toString(), "--rate", "1gbit", "--versus-mpi",
                "netty");
        assertEquals(0, outcome.status(), outcome.err());
        assertTrue(outcome.out().startsWith("| size | n=2 netty float: star ÷ ring |\n|---:|---:|\n| 1 KiB | 2.00 |\n"),
                outcome.out());
        assertTrue(outcome.out().contains("(n/2 = 1.0); the ring's busbw there is 160% of the link rate\n"),
                outcome.out());
        assertTrue(outcome.out().endsWith("ringstar (netty) p50 ÷ Open MPI p50 (TCP) over the same links; above 1 "
                + "ringstar is slower:\n\n| size | n=2 ring ÷ Allreduce | n=2 star ÷ Reduce+Bcast |\n|---:|---:|---:|\n"
                + "| 1 KiB | 2.00 | 4.00 |\n"), outcome.out());
    }

    @Test
    void aMalformedFileEndsWithStatusOneAndNamesTheFileAndLine() throws Exception {
        Path bad = dir.resolve("bad.csv");
        Files.writeString(bad, Fixtures.HEADER + "\n1,2,3\n");
        Outcome outcome = run("cluster", bad.toString());
        assertEquals(1, outcome.status());
        assertEquals("ringstar report cluster: " + bad + ":2: 3 fields, but the header has 18\n", outcome.err());
        Outcome missing = run("compare-mpi", dir.resolve("none.csv").toString());
        assertEquals(1, missing.status());
        assertEquals("ringstar report compare-mpi: no such file: " + dir.resolve("none.csv") + "\n", missing.err());
    }

    @Test
    void mergeKeepsOneHeaderSetsTheTransportAndRefusesOtherColumns() throws Exception {
        Path merged = dir.resolve("merged.csv");
        Outcome outcome = run("merge", "--transport", "aeron-ipc", "--out", merged.toString(),
                sample("a.csv", 0).toString(), sample("b.csv", 0).toString());
        assertEquals(0, outcome.status(), outcome.err());
        List<ResultRow> rows = ResultRow.read(merged);
        assertEquals(8, rows.size());
        assertTrue(rows.stream().allMatch(row -> row.transport().equals("aeron-ipc")), rows.toString());
        assertEquals(Fixtures.HEADER, Files.readAllLines(merged).get(0));

        Path other = dir.resolve("other.csv");
        Files.writeString(other, "world_size,transport\n2,netty\n");
        Outcome refused = run("merge", "--out", merged.toString(), sample("c.csv", 0).toString(), other.toString());
        assertEquals(1, refused.status());
        assertTrue(refused.err().contains(other + " has other columns than " + dir.resolve("c.csv")), refused.err());
    }

    @Test
    void mergeWidensOlderPartsToTheBenchsAccountingColumns() throws Exception {
        // Open MPI's program writes the older columns; ringstar's bench adds its accounting at the end.
        Path mpi = Fixtures.csv(dir.resolve("mpi.csv"),
                List.of(Fixtures.line(2, "mpi-tcp", "float", "mpi", "reduce", 1024, 5, 30, 0.4, 0)));
        String accounting = String.join(",", ResultFile.ACCOUNTING_COLUMNS);
        Path ringstar = dir.resolve("ringstar.csv");
        Files.writeString(ringstar, Fixtures.HEADER + "," + accounting + "\n"
                + Fixtures.line(2, "netty", "float", "ring", "reduce", 1024, 10, 30, 0.2, 0)
                + ",12.5,30,0.01,0.5,0,0,0.75,0.01,3,0.2\n");
        Path merged = dir.resolve("merged.csv");
        Outcome outcome = run("merge", "--out", merged.toString(), mpi.toString(), ringstar.toString());
        assertEquals(0, outcome.status(), outcome.err());
        List<String> lines = Files.readAllLines(merged);
        assertEquals(Fixtures.HEADER + "," + accounting, lines.get(0));
        assertTrue(lines.get(1).endsWith(",0,0" + ",".repeat(ResultFile.ACCOUNTING_COLUMNS.size())), lines.get(1));
        assertTrue(lines.get(2).endsWith(",12.5,30,0.01,0.5,0,0,0.75,0.01,3,0.2"), lines.get(2));
        // The reports read the merged file, and a file of the older columns alone.
        assertEquals(2, ResultRow.read(merged).size());
        assertEquals(0, run("compare-mpi", merged.toString()).status());
        assertEquals(1, ResultRow.read(mpi).size());
    }

    @Test
    void wrongFailsOnlyWhenARowIsWrong() {
        assertEquals(0, run("wrong", sample("right.csv", 0).toString()).status());
        Outcome wrong = run("wrong", sample("right2.csv", 0).toString(), sample("wrong.csv", 3).toString());
        assertEquals(1, wrong.status());
        assertEquals(dir.resolve("wrong.csv") + ": 1 rows have wrong elements (column wrong)\n", wrong.out());
    }

    @Test
    void usageErrorsEndWithStatusTwo() {
        Outcome none = run();
        assertEquals(2, none.status());
        assertTrue(none.err().contains("which report? One of: benchmarks, compare-mpi, cluster, merge, wrong"),
                none.err());
        assertEquals(2, run("cluster", "x.csv", "--speed", "1").status());
        assertEquals(2, run("benchmarks", "--out", "x.md").status());
        assertEquals(0, run("benchmarks", "--help").status());
    }

    @Test
    void benchmarksWritesTheReportAndFailsWhenAStepFailed() throws Exception {
        Path results = dir.resolve("results");
        RunRecordTest.writeRun(results, "");
        Path report = dir.resolve("BENCHMARKS.md");
        Outcome outcome = run("benchmarks", "--results", results.toString(), "--out", report.toString(), "--log", "l");
        assertEquals(1, outcome.status());
        assertEquals("ringstar report benchmarks: step jmh failed; see l\n", outcome.err());
        assertTrue(Files.readString(report).startsWith("# ringstar benchmarks\n"));
        assertTrue(Files.notExists(dir.resolve("BENCHMARKS.md.tmp")));
    }
}
