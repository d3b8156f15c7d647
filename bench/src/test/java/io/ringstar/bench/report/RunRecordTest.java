package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The run record of a benchmark run: its steps and arguments, as benchmarks.sh writes them. */
public class RunRecordTest {
    @TempDir
    Path dir;

    public static void writeRun(Path results, String arguments) throws Exception {
        Files.createDirectories(results);
        Files.writeString(results.resolve("run.txt"), String.join("\n", "1795692691", "1795694196", "3.25 4.92 4.35",
                "1.90 3.24 4.28", arguments, "4", "2,3,4", "float", "1gbit") + "\n");
        Files.writeString(results.resolve("steps.txt"), "build\tmvn -B -q package\t26\t0\n"
                + "jmh\tjava -jar x.jar jmh (A|B)\t215\t3\n");
    }

    @Test
    void readsTheRunAndItsSteps() throws Exception {
        writeRun(dir, "--quick");
        RunRecord run = RunRecord.read(dir);
        assertEquals(1795694196 - 1795692691, run.finished() - run.started());
        assertEquals("--quick", run.arguments());
        assertEquals(4, run.worldSize());
        assertEquals("1gbit", run.rate());
        assertEquals(List.of(new RunRecord.Step("build", "mvn -B -q package", 26, 0),
                new RunRecord.Step("jmh", "java -jar x.jar jmh (A|B)", 215, 3)), run.steps());
        assertEquals("passed in 26 s", run.outcome("build", "the.log"));
        assertEquals("FAILED (status 3) after 215 s; see the.log", run.outcome("jmh", "the.log"));
        assertEquals("not run", run.outcome("cluster", "the.log"));
        assertEquals("", run.command("cluster"));
    }

    @Test
    void noRunIsRefusedAndAShortRunNamesTheFile() throws Exception {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RunRecord.read(dir)).getMessage()
                .startsWith("no earlier run in " + dir + " to report on"));
        Files.writeString(dir.resolve("run.txt"), "1\n2\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RunRecord.read(dir)).getMessage()
                .startsWith(dir.resolve("run.txt") + ":2: 9 lines expected"));
    }

    @Test
    void aMalformedStepIsRefusedNamingTheFileAndLine() throws Exception {
        writeRun(dir, "");
        Files.writeString(dir.resolve("steps.txt"), "build\tmvn\t26\t0\nsweep mvn 12 0\n");
        assertEquals(dir.resolve("steps.txt") + ":2: 1 tab-separated fields, expected 4 (name, command, seconds, "
                + "status)", assertThrows(IllegalArgumentException.class, () -> RunRecord.read(dir)).getMessage());
        Files.writeString(dir.resolve("steps.txt"), "build\tmvn\tlong\t0\n");
        assertEquals(dir.resolve("steps.txt") + ":1: 'long' is not a whole number",
                assertThrows(IllegalArgumentException.class, () -> RunRecord.read(dir)).getMessage());
    }
}
