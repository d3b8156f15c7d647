package io.ringstar.cli.report;

import static io.ringstar.cli.report.TraceFixtures.dump;
import static io.ringstar.cli.report.TraceFixtures.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.ringstar.cli.report.TraceFixtures.Dump;
import io.ringstar.cli.report.TraceFixtures.Outcome;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TimelineCommandTest {
    @TempDir
    Path dir;

    /**
     * Three ranks whose nanoTime clocks differ by hours: rank 0 timed out in #2, rank 1 is still in #2
     * with #3 queued behind it, rank 2 ran #2 and #3 overlapping (non-blocking) and dumped on request.
     */
    private void writeDumps() throws Exception {
        Dump zero = dump(0, 3, 5_201).reason("failure: CollectiveTimeoutException: ...");
        zero.call(1, "allReduce").ran(0, 100);
        zero.call(2, "reduceGradients").failed(200, 5_200, 2, "CollectiveTimeoutException: waited 5 s for rank 2");
        zero.writeTo(dir);
        Dump one = dump(1, 3, 5_300).reason("failure reported by rank 0 (first on rank 0)");
        one.call(1, "allReduce").ran(0, 100);
        one.call(2, "reduceGradients").running(210, 2);
        one.call(3, "allReduce").queued(250);
        one.writeTo(dir);
        Dump two = dump(2, 3, 5_250);
        two.call(1, "allReduce").ran(0, 100);
        two.call(2, "allReduce").issuedAt(120).ran(150, 400);
        two.call(3, "allReduce").ran(200, 300);
        two.writeTo(dir);
        Files.writeString(dir.resolve("junk.json"), "{\"format\": \"ringstar-trace\", \"version\": 1, \"entr");
    }

    private static List<JsonObject> events(JsonObject trace, String phase) {
        List<JsonObject> events = new ArrayList<>();
        for (JsonElement event : trace.getAsJsonArray("traceEvents")) {
            if (event.getAsJsonObject().get("ph").getAsString().equals(phase)) {
                events.add(event.getAsJsonObject());
            }
        }
        return events;
    }

    private static JsonObject find(List<JsonObject> events, int pid, String name, long sequence) {
        return events.stream().filter(event -> event.get("pid").getAsInt() == pid
                && event.get("name").getAsString().equals(name)
                && event.getAsJsonObject("args").get("sequence").getAsLong() == sequence).findFirst().orElseThrow();
    }

    private static BigDecimal micros(JsonObject event, String field) {
        return event.get(field).getAsBigDecimal();
    }

    @Test
    void theDumpsBecomeOneTraceWithAProcessPerRankOnTheWallClock() throws Exception {
        writeDumps();
        Path out = dir.resolve("out").resolve("trace.json");
        Files.createDirectories(out.getParent());

        Outcome outcome = report("timeline", dir.toString(), "--out", out.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertEquals("ringstar report timeline: junk.json: not a ringstar trace: truncated at byte 48\n",
                outcome.err());
        assertEquals("wrote " + out + ": 3 ranks, 8 calls; open it in Perfetto or chrome://tracing\n", outcome.out());
        assertFalse(Files.exists(out.resolveSibling("trace.json.tmp")));
        JsonObject trace = JsonParser.parseString(Files.readString(out)).getAsJsonObject();
        assertEquals("ms", trace.get("displayTimeUnit").getAsString());

        Map<Integer, String> processNames = new TreeMap<>();
        Map<Integer, Integer> sortIndexes = new TreeMap<>();
        List<String> threadNames = new ArrayList<>();
        for (JsonObject meta : events(trace, "M")) {
            int pid = meta.get("pid").getAsInt();
            JsonObject args = meta.getAsJsonObject("args");
            switch (meta.get("name").getAsString()) {
                case "process_name" -> processNames.put(pid, args.get("name").getAsString());
                case "process_sort_index" -> sortIndexes.put(pid, args.get("sort_index").getAsInt());
                case "thread_name" -> threadNames.add(pid + "/" + meta.get("tid").getAsInt() + " "
                        + args.get("name").getAsString());
                default -> {
                }
            }
        }
        assertEquals(Map.of(0, "rank 0 (box-0, pid 100)", 1, "rank 1 (box-1, pid 101)", 2, "rank 2 (box-2, pid 102)"),
                processNames);
        assertEquals(Map.of(0, 0, 1, 1, 2, 2), sortIndexes);
        assertEquals(List.of("0/0 aggregator", "1/0 aggregator", "2/0 aggregator",
                "2/1 aggregator (overlapping calls 2)"), threadNames);

        // Every event after the metadata in time order, from 0 (the earliest event of all ranks).
        BigDecimal previous = BigDecimal.ZERO;
        BigDecimal earliest = null;
        JsonArray all = trace.getAsJsonArray("traceEvents");
        for (JsonElement element : all) {
            JsonObject event = element.getAsJsonObject();
            if (event.get("ph").getAsString().equals("M")) {
                continue;
            }
            BigDecimal ts = micros(event, "ts");
            assertTrue(ts.compareTo(previous) >= 0, event + " before " + previous);
            previous = ts;
            earliest = earliest == null ? ts : earliest;
            assertTrue(event.has("pid") && event.has("tid") && event.has("name"), event.toString());
        }
        assertEquals(0, BigDecimal.ZERO.compareTo(earliest));

        List<JsonObject> slices = events(trace, "X");
        assertEquals(7, slices.size(), slices.toString());
        for (int rank = 0; rank < 3; rank++) {
            // The same wall-clock instant on three different nanoTime clocks.
            JsonObject first = find(slices, rank, "allReduce", 1);
            assertEquals(new BigDecimal("0.000"), micros(first, "ts"));
            assertEquals(new BigDecimal("100000.000"), micros(first, "dur"));
            assertEquals("completed", first.getAsJsonObject("args").get("state").getAsString());
            assertEquals("ring", first.getAsJsonObject("args").get("algorithm").getAsString());
            assertEquals(80, first.getAsJsonObject("args").get("bytes").getAsLong());
            assertEquals(10, first.getAsJsonObject("args").getAsJsonObject("elements").get("FLOAT").getAsLong());
            assertEquals(12000, first.getAsJsonObject("args").get("waitNanos").getAsLong());
        }
        JsonObject failed = find(slices, 0, "reduceGradients", 2);
        assertEquals(new BigDecimal("200000.000"), micros(failed, "ts"));
        assertEquals(new BigDecimal("5000000.000"), micros(failed, "dur"));
        assertEquals("failed", failed.getAsJsonObject("args").get("state").getAsString());
        assertEquals("CollectiveTimeoutException: waited 5 s for rank 2",
                failed.getAsJsonObject("args").get("error").getAsString());

        JsonObject running = find(slices, 1, "reduceGradients", 2);
        assertEquals(new BigDecimal("210000.000"), micros(running, "ts"));
        // Still running: it ends at rank 1's dump, 5300 ms.
        assertEquals(new BigDecimal("5090000.000"), micros(running, "dur"));
        assertTrue(running.getAsJsonObject("args").get("inProgress").getAsString().contains("still running"));

        JsonObject queued = events(trace, "i").stream().filter(event -> event.get("name").getAsString()
                .equals("allReduce (issued)")).findFirst().orElseThrow();
        assertEquals(1, queued.get("pid").getAsInt());
        assertEquals(new BigDecimal("250000.000"), micros(queued, "ts"));
        assertEquals("issued", queued.getAsJsonObject("args").get("state").getAsString());

        JsonObject outer = find(slices, 2, "allReduce", 2);
        JsonObject inner = find(slices, 2, "allReduce", 3);
        assertEquals(0, outer.get("tid").getAsInt());
        assertEquals(1, inner.get("tid").getAsInt());
        assertEquals(new BigDecimal("30000.000"), outer.getAsJsonObject("args").get("queuedMicros").getAsBigDecimal());

        List<String> dumps = events(trace, "i").stream().filter(event -> event.get("name").getAsString()
                .equals("dump")).map(event -> event.get("pid").getAsInt() + " " + micros(event, "ts") + " "
                + event.getAsJsonObject("args").get("reason").getAsString()).toList();
        assertEquals(List.of("0 5201000.000 failure: CollectiveTimeoutException: ...", "2 5250000.000 request",
                "1 5300000.000 failure reported by rank 0 (first on rank 0)"), dumps);
    }

    @Test
    void withoutAReadableDumpNothingIsWritten() throws Exception {
        Path out = dir.resolve("trace.json");
        Files.writeString(dir.resolve("junk.json"), "[]");
        Outcome outcome = report("timeline", dir.toString(), "--out", out.toString());
        assertEquals(1, outcome.status());
        assertEquals("ringstar report timeline: junk.json: not a ringstar trace: JSON, but not an object\n"
                + "ringstar report timeline: no readable trace dump in " + dir + "\n", outcome.err());
        assertFalse(Files.exists(out));

        Outcome missing = report("timeline", dir.resolve("none").toString(), "--out", out.toString());
        assertEquals(1, missing.status());
        assertEquals(2, report("timeline", dir.toString()).status());
    }
}
