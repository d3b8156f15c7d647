package io.ringstar.internal.observe;

import static io.ringstar.testing.TraceDumps.longOrNull;
import static io.ringstar.testing.TraceDumps.stringOrNull;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.CollectiveState;
import io.ringstar.testing.TraceDumps;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The trace dump's JSON (format {@code ringstar-trace} version 1): it parses as strict JSON, every
 * field of the format is there with the value the recorder and the header hold, strings of any
 * characters come back unchanged, and a second dump replaces the first whole.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TraceFileTest {
    /** Every character a string may not hold raw in JSON, and the two it must escape. */
    private static final String AWKWARD;

    static {
        StringBuilder text = new StringBuilder("say \"no\" \\ back");
        for (char c = 0; c < 0x20; c++) {
            text.append(c);
        }
        AWKWARD = text.append("\u007f\u00e9\u4e2d end").toString();
    }

    private static final TraceFile.Header HEADER = new TraceFile.Header("job-7", "aggregator", 1, 3, "box-1", 12345,
            "failure: CollectiveTimeoutException: reduceGradients on rank 1", 1_764_390_000_123L, 987_654_321_000L,
            5_000_000_000L, 5);

    /** Two FLOAT tensors of 7 and 11 elements and one DOUBLE of 5: 72 + 40 bytes. */
    private static TensorLayout mixedLayout() {
        INDArray[] tensors = {Nd4j.create(DataType.FLOAT, 7), Nd4j.create(DataType.DOUBLE, 5),
            Nd4j.create(DataType.FLOAT, 11)};
        return TensorLayout.of("allReduce", 1, tensors);
    }

    /**
     * A recorder of 5 entries after 7 calls: #1 and #2 dropped; #3 completed, #4 a barrier, #5 a
     * broadcast from root 2 that failed waiting for rank 2, #6 running, #7 issued.
     */
    private static FlightRecorder sevenCalls(TensorLayout layout) {
        FlightRecorder recorder = new FlightRecorder(5);
        for (long sequence = 1; sequence <= 3; sequence++) {
            recorder.add(sequence, "allReduce", "doubling", -1, layout, 112, 1_000 * sequence, 1_000 * sequence);
            recorder.ended(sequence, CollectiveState.COMPLETED, 1_000 * sequence + 500, 40, -1, null);
        }
        recorder.add(4, "barrier", "doubling", -1, null, 0, 4_000, 4_000);
        recorder.ended(4, CollectiveState.COMPLETED, 4_100, 0, -1, null);
        recorder.add(5, "broadcast", "ring", 2, layout, 112, 5_000, 5_000);
        recorder.ended(5, CollectiveState.FAILED, 5_900, 800, 2, "CollectiveTimeoutException: " + AWKWARD);
        recorder.add(6, "allReduce", "ring", -1, layout, 112, 6_000, 6_100);
        recorder.add(7, "allReduce", "ring", -1, layout, 112, 7_000, 0);
        return recorder;
    }

    @Test
    void theDumpParsesAndHoldsEveryFieldOfTheFormat() {
        TensorLayout layout = mixedLayout();
        String json = TraceFile.render(HEADER, sevenCalls(layout).snapshot(333, 0));
        JsonObject dump = TraceDumps.parse(json);

        assertEquals(Set.of("format", "version", "jobId", "owner", "rank", "worldSize", "host", "pid", "reason",
                "clock", "timeoutNanos", "traceEntries", "recorded", "dropped", "lastDroppedSequence", "entries"),
                dump.keySet());
        assertEquals("ringstar-trace", dump.get("format").getAsString());
        assertEquals(1, dump.get("version").getAsInt());
        assertEquals("job-7", dump.get("jobId").getAsString());
        assertEquals("aggregator", dump.get("owner").getAsString());
        assertEquals(1, dump.get("rank").getAsInt());
        assertEquals(3, dump.get("worldSize").getAsInt());
        assertEquals("box-1", dump.get("host").getAsString());
        assertEquals(12345, dump.get("pid").getAsLong());
        assertEquals("failure: CollectiveTimeoutException: reduceGradients on rank 1",
                dump.get("reason").getAsString());
        JsonObject clock = dump.getAsJsonObject("clock");
        assertEquals(Set.of("epochMillis", "nanoTime"), clock.keySet());
        assertEquals(1_764_390_000_123L, clock.get("epochMillis").getAsLong());
        assertEquals(987_654_321_000L, clock.get("nanoTime").getAsLong());
        assertEquals(5_000_000_000L, dump.get("timeoutNanos").getAsLong());
        assertEquals(5, dump.get("traceEntries").getAsInt());
        assertEquals(7, dump.get("recorded").getAsLong());
        assertEquals(2, dump.get("dropped").getAsLong());
        assertEquals(2, longOrNull(dump, "lastDroppedSequence"));

        JsonArray entries = dump.getAsJsonArray("entries");
        assertEquals(5, entries.size());
        Set<String> entryFields = Set.of("sequence", "operation", "algorithm", "root", "elements", "tensors", "bytes",
                "state", "issuedNanos", "startedNanos", "endedNanos", "waitNanos", "waitingOn", "error");
        for (int i = 0; i < entries.size(); i++) {
            JsonObject entry = entries.get(i).getAsJsonObject();
            assertEquals(entryFields, entry.keySet(), "entry " + i);
            assertEquals(3 + i, entry.get("sequence").getAsLong(), "entries in sequence order, oldest first");
        }

        JsonObject completed = entries.get(0).getAsJsonObject();
        assertEquals("allReduce", completed.get("operation").getAsString());
        assertEquals("doubling", completed.get("algorithm").getAsString());
        assertEquals(-1, longOrNull(completed, "root"));
        assertEquals(Map.of("FLOAT", 18L, "DOUBLE", 5L), counts(completed.getAsJsonObject("elements")));
        assertEquals(3, completed.get("tensors").getAsInt());
        assertEquals(112, completed.get("bytes").getAsLong());
        assertEquals("completed", completed.get("state").getAsString());
        assertEquals(3_000, completed.get("issuedNanos").getAsLong());
        assertEquals(3_000, completed.get("startedNanos").getAsLong());
        assertEquals(3_500, completed.get("endedNanos").getAsLong());
        assertEquals(40, completed.get("waitNanos").getAsLong());
        assertEquals(-1, longOrNull(completed, "waitingOn"));
        assertNull(stringOrNull(completed, "error"));

        JsonObject barrier = entries.get(1).getAsJsonObject();
        assertEquals("barrier", barrier.get("operation").getAsString());
        assertEquals(Map.of(), counts(barrier.getAsJsonObject("elements")));
        assertEquals(0, barrier.get("tensors").getAsInt());
        assertEquals(0, barrier.get("bytes").getAsLong());

        JsonObject failed = entries.get(2).getAsJsonObject();
        assertEquals("broadcast", failed.get("operation").getAsString());
        assertEquals(2, longOrNull(failed, "root"));
        assertEquals("failed", failed.get("state").getAsString());
        assertEquals(5_900, failed.get("endedNanos").getAsLong());
        assertEquals(800, failed.get("waitNanos").getAsLong());
        assertEquals(2, longOrNull(failed, "waitingOn"));
        assertEquals("CollectiveTimeoutException: " + AWKWARD, stringOrNull(failed, "error"));

        // The running call carries the dump's wait so far and the peer it waits for.
        JsonObject running = entries.get(3).getAsJsonObject();
        assertEquals("started", running.get("state").getAsString());
        assertEquals(6_000, running.get("issuedNanos").getAsLong());
        assertEquals(6_100, running.get("startedNanos").getAsLong());
        assertEquals(0, running.get("endedNanos").getAsLong());
        assertEquals(333, running.get("waitNanos").getAsLong());
        assertEquals(0, longOrNull(running, "waitingOn"));

        JsonObject issued = entries.get(4).getAsJsonObject();
        assertEquals("issued", issued.get("state").getAsString());
        assertEquals(7_000, issued.get("issuedNanos").getAsLong());
        assertEquals(0, issued.get("startedNanos").getAsLong());
        assertEquals(0, issued.get("endedNanos").getAsLong());
    }

    @Test
    void anEmptyRecorderStillWritesTheHeader() {
        JsonObject dump = TraceDumps.parse(TraceFile.render(HEADER, new FlightRecorder(0).snapshot(0, -1)));
        assertEquals("ringstar-trace", dump.get("format").getAsString());
        assertEquals(1, dump.get("rank").getAsInt());
        assertEquals(0, dump.get("recorded").getAsLong());
        assertEquals(0, dump.get("dropped").getAsLong());
        assertEquals(-1, longOrNull(dump, "lastDroppedSequence"));
        assertEquals(0, dump.getAsJsonArray("entries").size());
    }

    @Test
    void stringsOfAnyCharactersComeBackUnchanged() {
        String quoted = TraceFile.quote(AWKWARD);
        for (int i = 1; i < quoted.length() - 1; i++) {
            assertTrue(quoted.charAt(i) >= 0x20, "raw control character " + (int) quoted.charAt(i) + " at " + i);
        }
        TraceFile.Header header = new TraceFile.Header(AWKWARD, "communicator", 0, 3, AWKWARD, 1, AWKWARD, 0, 0, 1,
                5);
        FlightRecorder recorder = new FlightRecorder(5);
        recorder.add(1, AWKWARD, AWKWARD, -1, null, 0, 1, 1);
        recorder.ended(1, CollectiveState.FAILED, 2, 0, -1, AWKWARD);
        JsonObject dump = TraceDumps.parse(TraceFile.render(header, recorder.snapshot(0, -1)));
        assertEquals(AWKWARD, dump.get("jobId").getAsString());
        assertEquals(AWKWARD, dump.get("host").getAsString());
        assertEquals(AWKWARD, dump.get("reason").getAsString());
        JsonObject entry = dump.getAsJsonArray("entries").get(0).getAsJsonObject();
        assertEquals(AWKWARD, entry.get("operation").getAsString());
        assertEquals(AWKWARD, entry.get("algorithm").getAsString());
        assertEquals(AWKWARD, entry.get("error").getAsString());
    }

    @Test
    void theFileIsNamedByJobRankAndOwnerWithTheJobIdSanitised(@TempDir Path dir) {
        TraceFile.Header header = new TraceFile.Header("my job/1:\u00e9", "async-server", 2, 3, "h", 1, "request", 0, 0,
                1, 5);
        Path file = TraceFile.write(dir.resolve("made/on/demand"), header, new FlightRecorder(5).snapshot(0, -1));
        assertEquals(dir.resolve("made/on/demand/ringstar-my_job_1__-rank2.json"), file);
        assertEquals("my job/1:\u00e9", TraceDumps.read(file).get("jobId").getAsString());
    }

    @Test
    void aSecondDumpReplacesTheFirstWholeAndLeavesNoTemporaryFile(@TempDir Path dir) throws Exception {
        TensorLayout layout = mixedLayout();
        FlightRecorder recorder = sevenCalls(layout);
        String small = TraceFile.render(HEADER, new FlightRecorder(5).snapshot(0, -1));
        String large = TraceFile.render(HEADER, recorder.snapshot(0, -1));
        Path file = TraceFile.write(dir, HEADER, recorder.snapshot(0, -1));
        assertEquals(large, Files.readString(file, StandardCharsets.UTF_8));
        assertEquals(file, TraceFile.write(dir, HEADER, new FlightRecorder(5).snapshot(0, -1)));
        assertEquals(small, Files.readString(file, StandardCharsets.UTF_8), "the shorter dump, with no tail of the "
                + "longer one");
        assertEquals(List.of(file.getFileName().toString()), names(dir));

        // A reader that opens the file while dumps replace it sees one dump or the other, whole.
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger reads = new AtomicInteger();
        AtomicReference<String> torn = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            while (writing.get() && torn.get() == null) {
                try {
                    String text = Files.readString(file, StandardCharsets.UTF_8);
                    reads.incrementAndGet();
                    if (!text.equals(small) && !text.equals(large)) {
                        torn.set(text);
                    }
                } catch (NoSuchFileException e) {
                    torn.set("no file: a moment without it");
                } catch (IOException e) {
                    torn.set(e.toString());
                }
            }
        }, "dump-reader");
        reader.start();
        try {
            for (int i = 0; i < 300 && torn.get() == null; i++) {
                TraceFile.write(dir, HEADER, (i % 2 == 0 ? recorder : new FlightRecorder(5)).snapshot(0, -1));
            }
        } finally {
            writing.set(false);
            reader.join();
        }
        assertNull(torn.get(), "a reader saw part of a dump");
        assertTrue(reads.get() > 0, "the reader read nothing");
        assertEquals(List.of(file.getFileName().toString()), names(dir));
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(path -> path.getFileName().toString()).sorted().toList();
        }
    }

    private static Map<String, Long> counts(JsonObject elements) {
        return elements.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                entry -> entry.getValue().getAsLong()));
    }
}
