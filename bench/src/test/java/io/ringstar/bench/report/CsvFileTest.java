package io.ringstar.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CsvFileTest {
    @TempDir
    Path dir;

    @Test
    void readsQuotedFieldsCrlfAndSkipsBlankLines() throws Exception {
        Path file = dir.resolve("jmh.csv");
        Files.writeString(file, "\"Benchmark\",\"Score\"\r\n\"a,b\",1.5\r\n\r\n\"say \"\"hi\"\"\",\r\n");
        CsvFile csv = CsvFile.read(file);
        assertEquals(List.of("Benchmark", "Score"), csv.header());
        assertEquals(2, csv.rows().size());
        assertEquals("a,b", csv.rows().get(0).get("Benchmark"));
        assertEquals(1.5, csv.rows().get(0).number("Score"));
        assertEquals("say \"hi\"", csv.rows().get(1).get("Benchmark"));
        assertEquals("", csv.rows().get(1).get("Score"));
        assertEquals(4, csv.rows().get(1).line());
    }

    @Test
    void readsResultRowsOfTheBenchSchema() throws Exception {
        Path file = Fixtures.csv(dir.resolve("sweep.csv"), List.of(
                Fixtures.line(4, "netty", "float", "ring", "reduce", 1024, 12.5, 30, 0.125, 0),
                Fixtures.line(4, "inproc", "double", "ps", "broadcast", 8, 3, 4, 0.002, 7)));
        List<ResultRow> rows = ResultRow.read(file);
        assertEquals(new ResultRow(4, "netty", "float", "ring", "reduce", 1024, 12.5, 30, 0.125, 0), rows.get(0));
        assertTrue(rows.get(1).isWrong());
    }

    @Test
    void headerOnlyIsNoRows() throws Exception {
        assertEquals(List.of(), ResultRow.read(Fixtures.csv(dir.resolve("empty.csv"), List.of())));
    }

    @Test
    void aRowWithTooFewFieldsIsRefusedNamingTheFileAndLine() throws Exception {
        Path file = Fixtures.csv(dir.resolve("short.csv"), List.of(
                Fixtures.line(2, "netty", "float", "ring", "reduce", 4, 1, 2, 0.1, 0), "2026,2,threads"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResultRow.read(file));
        assertEquals(file + ":3: 3 fields, but the header has 18", e.getMessage());
    }

    @Test
    void aFieldThatIsNotANumberIsRefusedNamingTheFileLineAndColumn() throws Exception {
        String line = Fixtures.line(2, "netty", "float", "ring", "reduce", 4, 1, 2, 0.1, 0);
        Path file = Fixtures.csv(dir.resolve("text.csv"), List.of(line.replace(",0.1,0.1,", ",0.1,fast,")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResultRow.read(file));
        assertEquals(file + ":2: column busbw_gbps: 'fast' is not a number", e.getMessage());
    }

    @Test
    void aMissingColumnAnEmptyFileAndAnOpenQuoteAreRefused() throws Exception {
        Path noWrong = dir.resolve("no-wrong.csv");
        Files.writeString(noWrong, "world_size,transport\n2,netty\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ResultRow.read(noWrong)).getMessage()
                .startsWith(noWrong + ":1: no column 'type' in the header"));
        Path empty = dir.resolve("empty.csv");
        Files.writeString(empty, "");
        assertEquals(empty + ": empty, no header line",
                assertThrows(IllegalArgumentException.class, () -> CsvFile.read(empty)).getMessage());
        Path open = dir.resolve("open.csv");
        Files.writeString(open, "a,b\n\"x,1\n");
        assertEquals(open + ":2: a quoted field is not closed",
                assertThrows(IllegalArgumentException.class, () -> CsvFile.read(open)).getMessage());
    }
}
