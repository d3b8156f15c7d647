package io.ringstar.cli.report;

import static io.ringstar.cli.report.TraceFixtures.dump;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.cli.report.TraceFixtures.Dump;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TraceDumpsTest {
    @TempDir
    Path dir;

    /** The one problem that reading {@code text} as the only file of a directory reports. */
    private String problemOf(String text) throws Exception {
        return problemOf(text.getBytes(StandardCharsets.UTF_8));
    }

    private String problemOf(byte[] bytes) throws Exception {
        Path file = Files.write(dir.resolve("d.json"), bytes);
        TraceDumps dumps = TraceDumps.read(dir);
        Files.delete(file);
        assertTrue(dumps.isEmpty(), dumps.toString());
        assertEquals(1, dumps.skipped().size(), dumps.skipped().toString());
        assertEquals("d.json", dumps.skipped().get(0).file());
        return dumps.skipped().get(0).problem();
    }

    private static String good() {
        Dump dump = dump(1, 2, 1_000);
        dump.call(1, "allReduce").ran(0, 10);
        return dump.json();
    }

    @Test
    void aDumpIsReadWithItsClockAndEntriesAndUnknownFieldsAreIgnored() throws Exception {
        Dump dump = dump(1, 2, 1_000).extra("\"futureField\": {\"x\": [1, 2]}").reason("request");
        dump.call(1, "broadcast").root(0).data("{\"FLOAT\": 1000, \"DOUBLE\": 3}", 4).ran(100, 250);
        dump.call(2, "allReduce").running(300, 0);
        String json = dump.json().replace("\"error\": null}", "\"error\": null, \"laterField\": true}");
        Files.writeString(dir.resolve("r1.json"), json);

        TraceDumps dumps = TraceDumps.read(dir);

        assertEquals(List.of(), dumps.skipped());
        TraceDump read = dumps.all().get(0);
        assertEquals("r1.json", read.file());
        assertEquals("ringstar", read.jobId());
        assertEquals("aggregator", read.owner());
        assertEquals(1, read.rank());
        assertEquals(2, read.worldSize());
        assertEquals("box-1", read.host());
        assertEquals(101L, read.pid());
        TraceDump.Entry first = read.entries().get(0);
        assertEquals(Map.of("FLOAT", 1000L, "DOUBLE", 3L), first.elements());
        assertEquals("broadcast (root 0, FLOAT 1000, DOUBLE 3, 4 tensors)", first.signature());
        assertEquals(TraceDump.State.COMPLETED, first.state());
        // Back on the wall clock, exactly: 100 ms after the origin.
        assertEquals((TraceFixtures.ORIGIN + 100) * 1_000_000L, read.wallNanos(first.startedNanos()));
        assertEquals(150_000_000L, first.endedNanos() - first.startedNanos());
        TraceDump.Entry second = read.entries().get(1);
        assertEquals(TraceDump.State.STARTED, second.state());
        assertEquals(0, second.waitingOn());
        assertEquals(0, second.endedNanos());
    }

    @Test
    void eachKindOfBadFileIsNamedWithWhatIsWrong() throws Exception {
        assertEquals("not a ringstar trace: empty file", problemOf(""));
        assertEquals("not a ringstar trace: only white space", problemOf(" \n"));
        assertEquals("not a ringstar trace: not UTF-8 text", problemOf(new byte[] {'{', (byte) 0xC3, '}'}));
        byte[] cutInACharacter = "{\"host\": \"b\u00f6x".getBytes(StandardCharsets.UTF_8);
        assertEquals("not a ringstar trace: truncated at byte 12",
                problemOf(Arrays.copyOf(cutInACharacter, 12)));
        assertEquals("not a ringstar trace: JSON, but not an object", problemOf("[1, 2]"));
        assertEquals("not a ringstar trace: no \"format\" field", problemOf("{\"version\": 1}"));
        assertEquals("not a ringstar trace: truncated at byte 5", problemOf("{\"a\":"));
        String good = good();
        int cut = good.indexOf("ringstar\",") + 3;
        assertEquals("not a ringstar trace: truncated at byte " + cut, problemOf(good.substring(0, cut)));
        assertTrue(problemOf(good.replace("\"version\": 1,", "\"version\": 1"))
                .matches("not a ringstar trace: not JSON: .* at line 4 column \\d+"), good);
        assertTrue(problemOf(good + "{}").startsWith("not a ringstar trace: more after the JSON value at line"));
        assertTrue(problemOf(good.replace("\"version\": 1,", "// comment\n\"version\": 1,"))
                .startsWith("not a ringstar trace: not JSON: unexpected text at line 3 column"));
        assertEquals("a ringstar trace of version 2; this reader knows version 1",
                problemOf(good.replace("\"version\": 1", "\"version\": 2")));
        assertEquals("bad ringstar trace: version: missing",
                problemOf("{\"format\": \"ringstar-trace\", \"entries\": []}"));
        assertEquals("bad ringstar trace: clock: missing", problemOf(good.replaceFirst("\"clock\"", "\"clocks\"")));
        assertEquals("bad ringstar trace: clock.nanoTime: expected a whole number, found \"5\"",
                problemOf(good.replaceFirst("\"nanoTime\": \\d+", "\"nanoTime\": \"5\"")));
        assertEquals("bad ringstar trace: rank: 2 is outside 0..1",
                problemOf(good.replace("\"rank\": 1", "\"rank\": 2")));
        assertEquals("bad ringstar trace: jobId: expected a string, found 7",
                problemOf(good.replace("\"jobId\": \"ringstar\"", "\"jobId\": 7")));
        assertEquals("bad ringstar trace: entries: expected an array, found an object",
                problemOf(good.replaceFirst("\"entries\": \\[[^]]*]", "\"entries\": {}")));
        assertEquals("bad ringstar trace: entries[0].sequence: expected a whole number, found \"1\"",
                problemOf(good.replace("\"sequence\": 1", "\"sequence\": \"1\"")));
        assertEquals("bad ringstar trace: entries[0].bytes: expected a whole number, found 1.5",
                problemOf(good.replaceFirst("\"bytes\": \\d+", "\"bytes\": 1.5")));
        assertEquals("bad ringstar trace: entries[0].state: unknown state \"cancelled\" (issued, started, "
                + "completed or failed)", problemOf(good.replace("\"completed\"", "\"cancelled\"")));
        assertEquals("bad ringstar trace: entries[0].elements.FLOAT: expected a whole number, found \"ten\"",
                problemOf(good.replace("\"FLOAT\": 10", "\"FLOAT\": \"ten\"")));
        assertEquals("bad ringstar trace: entries[0].startedNanos: missing",
                problemOf(good.replaceFirst("\"startedNanos\": \\d+, ", "")));
    }

    @Test
    void entriesOutOfSequenceOrderAreRefused() throws Exception {
        Dump dump = dump(0, 1, 1_000);
        dump.call(5, "allReduce").ran(0, 10);
        dump.call(5, "allReduce").ran(20, 30);
        assertEquals("bad ringstar trace: entries[1].sequence: 5 after 5; entries must be in sequence order, each "
                + "once", problemOf(dump.json()));
    }

    @Test
    void ofTwoDumpsOfOneRankTheNewerIsKept() throws Exception {
        dump(0, 2, 1_000).completed(1, 3, 0).writeTo(dir, "a.json");
        dump(0, 2, 2_000).completed(1, 5, 0).writeTo(dir, "b.json");
        dump(1, 2, 2_000).completed(1, 5, 0).writeTo(dir);

        TraceDumps dumps = TraceDumps.read(dir);

        assertEquals(1, dumps.jobs().size());
        assertEquals("b.json", dumps.jobs().get(0).byRank().get(0).file());
        assertEquals(List.of(new TraceDumps.Skipped("a.json",
                "left out: an older dump of rank 0 (aggregator of job ringstar) than b.json")), dumps.skipped());
    }

    @Test
    void aDumpOfAnEarlierRunInAReusedDirectoryIsLeftOut() throws Exception {
        // Rank 2's file is two hours older than ranks 0 and 1's: this run's rank 2 left none.
        dump(0, 3, 7_200_000).completed(1, 3, 0).writeTo(dir);
        dump(1, 3, 7_200_500).completed(1, 3, 0).writeTo(dir);
        dump(2, 3, 0).completed(1, 3, 0).writeTo(dir);

        TraceDumps dumps = TraceDumps.read(dir);

        assertEquals(List.of(0, 1), List.copyOf(dumps.jobs().get(0).byRank().keySet()));
        assertEquals(1, dumps.skipped().size());
        assertEquals("ringstar-ringstar-rank2.json", dumps.skipped().get(0).file());
        assertTrue(dumps.skipped().get(0).problem().startsWith("left out: written 120 min before the newest dump of"
                + " job ringstar, by an earlier run"), dumps.skipped().get(0).problem());
    }

    @Test
    void aJobsFileNamesAreMatchedWithTheJobIdSanitisedAsTheWriterDoes() throws Exception {
        Dump dump = dump(0, 2, 1_000).job("my job/1", "communicator");
        assertEquals("ringstar-my_job_1-rank0.json", dump.fileName());
        dump.completed(1, 1, 0).writeTo(dir);
        TraceDumps.Job job = TraceDumps.read(dir).jobs().get(0);
        assertTrue(job.names("ringstar-my_job_1-rank1.json", 1));
        assertFalse(job.names("ringstar-other-rank1.json", 1));
        assertFalse(job.names("ringstar-my_job_1-rank1.json", 0));
    }

    @Test
    void truncationIsToldFromOtherDamage() {
        assertTrue(TraceDumps.unclosed("{\"a\": [1, 2"));
        assertTrue(TraceDumps.unclosed("{\"a\": \"x}"));
        assertTrue(TraceDumps.unclosed("{\"a\": \"\\\"}\""));
        assertFalse(TraceDumps.unclosed("{\"a\": \"{[\"}"));
        assertFalse(TraceDumps.unclosed("{\"a\" 1}"));
    }

    @Test
    void ranksThatDisagreeOnTheWorldSizeAreSaidTo() {
        dump(0, 2, 1_000).completed(1, 1, 0).writeTo(dir);
        dump(1, 3, 1_000).completed(1, 1, 0).writeTo(dir);
        String out = TraceFixtures.report("hang", dir.toString()).out();
        assertTrue(out.startsWith("job ringstar (aggregator), 3 ranks, dumps from ranks 0, 1 (their world sizes "
                + "disagree: 2, 3)\n"), out);
    }
}
