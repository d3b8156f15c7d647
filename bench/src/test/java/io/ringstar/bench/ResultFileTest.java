package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.ranks.Algorithm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The result file's schema, written and read back: the names, units and values that {@code report} relies on. */
class ResultFileTest {
    private static final ResultFile.Run RUN = new ResultFile.Run("2026-11-26T12:00:00Z", 4, "threads");
    private static final BenchRow ROW = new BenchRow("netty", ElementType.FLOAT, Algorithm.RING, "ring",
            Operation.REDUCE, 1 << 20, (1 << 20) / 4, 40, 123_456, 234_567, 1.5, 0, List.of(64L << 20),
            List.of(8L << 20, 9L << 20),
            List.of(new ResourceCounters(4_000_000, 80, 0, 40, 4), new ResourceCounters(2_000_000, 0, 0, 20, 0)),
            List.of(new ResourceCounters(12_000_000, 400, 0, 400, 8), new ResourceCounters(6_000_000, 0, 0, 80, 0)));
    /** The same row where the system counted nothing (no /proc). */
    private static final BenchRow UNCOUNTED = new BenchRow("netty", ElementType.FLOAT, Algorithm.RING, "ring",
            Operation.REDUCE, 1 << 20, (1 << 20) / 4, 40, 123_456, 234_567, 1.5, 0, List.of(64L << 20),
            List.of(8L << 20, 9L << 20), List.of(ResourceCounters.NONE, ResourceCounters.NONE),
            List.of(ResourceCounters.NONE, ResourceCounters.NONE));

    @TempDir
    Path directory;

    @Test
    void jsonKeepsTheCsvsColumnsWithTheirUnitsAndAddsMetaAndPerRankPeaks() throws IOException {
        Path file = directory.resolve("rows.json");
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("tool", "ringstar bench");
        meta.put("transports", List.of("netty"));
        meta.put("note", "quotes \" and <tags> & control \t characters survive");
        ResultFile.write(file, RUN, meta, List.of(ROW));

        JsonObject document = JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8))
                .getAsJsonObject();
        assertEquals("ringstar bench", document.getAsJsonObject("meta").get("tool").getAsString());
        assertEquals("quotes \" and <tags> & control \t characters survive",
                document.getAsJsonObject("meta").get("note").getAsString());
        JsonArray rows = document.getAsJsonArray("rows");
        assertEquals(1, rows.size());
        JsonObject row = rows.get(0).getAsJsonObject();
        List<String> columns = List.of(ResultFile.CSV_HEADER.split(","));
        for (String column : columns) {
            assertTrue(row.has(column), column + " in " + row);
        }
        assertEquals(columns.size() + 2, row.size(), row.toString());
        assertEquals("2026-11-26T12:00:00Z", row.get("date").getAsString());
        assertEquals(4, row.get("world_size").getAsInt());
        assertEquals("threads", row.get("placement").getAsString());
        assertEquals("float", row.get("type").getAsString());
        assertEquals("ring", row.get("algorithm").getAsString());
        assertEquals("reduce", row.get("op").getAsString());
        assertEquals(1 << 20, row.get("size_bytes").getAsLong());
        assertEquals(40, row.get("iters").getAsInt());
        // Microseconds with the nanoseconds as three decimals, written as plain numbers.
        assertEquals("123.456", row.get("time_p50_us").getAsBigDecimal().toPlainString());
        assertEquals("234.567", row.get("time_p99_us").getAsBigDecimal().toPlainString());
        assertEquals(ROW.busbwGbps(), row.get("busbw_gbps").getAsDouble(), 1e-5 * ROW.busbwGbps());
        assertEquals(9L << 20, row.get("offheap_peak_bytes").getAsLong());
        assertEquals(2, row.getAsJsonArray("offheap_peak_bytes_per_rank").size());
        assertTrue(Files.readString(file, StandardCharsets.UTF_8).contains("\"time_p50_us\":123.456"),
                "plain decimals, no exponent");
    }

    @Test
    void csvHasTheHeaderAndOneLinePerRowInItsOrder() throws IOException {
        Path file = directory.resolve("rows.csv");
        ResultFile.write(file, RUN, Map.of(), List.of(ROW, ROW));
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        assertEquals(ResultFile.CSV_HEADER, lines.get(0));
        assertEquals(3, lines.size());
        String[] cells = lines.get(1).split(",", -1);
        List<String> columns = List.of(ResultFile.CSV_HEADER.split(","));
        assertEquals(columns.size(), cells.length);
        assertEquals("123.456", cells[columns.indexOf("time_p50_us")]);
        assertEquals("netty", cells[columns.indexOf("transport")]);
    }

    @Test
    void accountingColumnsComeLastPerCallAndEmptyWhereUncounted() throws IOException {
        List<String> columns = List.of(ResultFile.CSV_HEADER.split(","));
        // Appended: the older columns keep their places, so older readers and files still agree.
        assertEquals("offheap_peak_bytes", columns.get(columns.size() - ResultFile.ACCOUNTING_COLUMNS.size() - 1));
        assertEquals(ResultFile.ACCOUNTING_COLUMNS,
                columns.subList(columns.size() - ResultFile.ACCOUNTING_COLUMNS.size(), columns.size()));
        Path file = directory.resolve("rows.csv");
        ResultFile.write(file, RUN, Map.of(), List.of(ROW, UNCOUNTED));
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        String[] counted = lines.get(1).split(",", -1);
        // Means over the ranks (threads) and the processes, divided by the 40 calls.
        assertEquals("75", counted[columns.indexOf("thread_cpu_us")]);
        assertEquals("225", counted[columns.indexOf("process_cpu_us")]);
        assertEquals("1", counted[columns.indexOf("thread_minor_faults")]);
        assertEquals("5", counted[columns.indexOf("process_minor_faults")]);
        assertEquals("0", counted[columns.indexOf("thread_major_faults")]);
        assertEquals("0.75", counted[columns.indexOf("thread_voluntary_switches")]);
        assertEquals("0.05", counted[columns.indexOf("thread_involuntary_switches")]);
        assertEquals("6", counted[columns.indexOf("process_voluntary_switches")]);
        assertEquals("0.1", counted[columns.indexOf("process_involuntary_switches")]);
        String[] uncounted = lines.get(2).split(",", -1);
        assertEquals(columns.size(), uncounted.length);
        for (String column : ResultFile.ACCOUNTING_COLUMNS) {
            assertEquals("", uncounted[columns.indexOf(column)], column);
        }

        Path json = directory.resolve("rows.json");
        ResultFile.write(json, RUN, Map.of(), List.of(UNCOUNTED));
        JsonObject row = JsonParser.parseString(Files.readString(json, StandardCharsets.UTF_8)).getAsJsonObject()
                .getAsJsonArray("rows").get(0).getAsJsonObject();
        for (String column : ResultFile.ACCOUNTING_COLUMNS) {
            assertTrue(row.has(column) && row.get(column).isJsonNull(), column + " in " + row);
        }
    }
}
