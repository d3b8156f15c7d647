package io.ringstar.cli.report;

import static io.ringstar.cli.report.TraceFixtures.dump;
import static io.ringstar.cli.report.TraceFixtures.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.cli.report.TraceFixtures.Call;
import io.ringstar.cli.report.TraceFixtures.Dump;
import io.ringstar.cli.report.TraceFixtures.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HangReportCommandTest {
    private static final String TIMEOUT = "CollectiveTimeoutException: reduceGradients on rank %d timed out after 5 s "
            + "waiting for rank %d";

    @TempDir
    Path dir;

    /** Calls #1..#16 (allReduce) and #17 broadcastParams completed, the latter ending at 500 ms. */
    private static Dump upTo17(int rank, int worldSize, long dumpedAt) {
        Dump dump = dump(rank, worldSize, dumpedAt).completed(1, 16, 0);
        dump.call(17, "broadcastParams").data("{\"FLOAT\": 10}", 1).root(0).ran(400, 500);
        return dump;
    }

    private static Dump timedOut(int rank, int worldSize, int peer) {
        Dump dump = upTo17(rank, worldSize, 5_601).reason("failure: " + TIMEOUT.formatted(rank, peer));
        dump.call(18, "reduceGradients").failed(600, 5_600, peer, TIMEOUT.formatted(rank, peer));
        return dump;
    }

    @Test
    void aSilentRankThatDumpedIsNamedWithItsLastCompletedCallAndHowLongBeforeTheOthersTimedOut() {
        timedOut(0, 4, 2).writeTo(dir);
        timedOut(1, 4, 2).writeTo(dir);
        timedOut(3, 4, 2).writeTo(dir);
        upTo17(2, 4, 5_700).reason("failure reported by rank 0 (first on rank 0)").writeTo(dir);

        Outcome outcome = report("hang", dir.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertEquals("", outcome.err());
        assertEquals("""
                job ringstar (aggregator), 4 ranks, dumps from ranks 0-3
                reduceGradients #18: ranks 0, 1, 3 waiting (CollectiveTimeoutException, waiting on rank 2); \
                rank 2 never started it; its last completed call was #17 broadcastParams, 5.1 s before the others' \
                timeouts
                ranks 0, 1, 3 failed #18 reduceGradients; rank 0's error: CollectiveTimeoutException: \
                reduceGradients on rank 0 timed out after 5 s waiting for rank 2
                """, outcome.out());
    }

    @Test
    void aRankWithoutADumpIsNamedAndTheWaitingRanksSayOnWhom() {
        timedOut(0, 4, 2).writeTo(dir);
        timedOut(1, 4, 2).writeTo(dir);
        Dump waiting = upTo17(3, 4, 5_650).reason("failure reported by rank 0 (first on rank 0)");
        waiting.call(18, "reduceGradients").running(610, 0);
        waiting.writeTo(dir);

        Outcome outcome = report("hang", dir.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertEquals("""
                job ringstar (aggregator), 4 ranks, dumps from ranks 0, 1, 3
                reduceGradients #18: ranks 0, 1, 3 waiting (0, 1: CollectiveTimeoutException, waiting on rank 2; \
                3: waiting on rank 0); rank 2 has no dump (crashed, stopped, or never failed)
                ranks 0, 1 failed #18 reduceGradients; rank 0's error: CollectiveTimeoutException: \
                reduceGradients on rank 0 timed out after 5 s waiting for rank 2
                """, outcome.out());
    }

    @Test
    void ranksThatCalledSomethingElseAtOneSequenceNumberAreNamedWithBothCalls() {
        for (int rank = 0; rank < 3; rank++) {
            Dump dump = dump(rank, 3, 6_000).completed(1, 4, 0);
            // Rank 1 broadcast from another root: the calls complete, but they are not the same call.
            dump.call(5, "broadcast").root(rank == 1 ? 1 : 0).data("{\"FLOAT\": 10}", 1).ran(200, 210);
            if (rank == 2) {
                dump.call(6, "broadcastParams").data("{\"FLOAT\": 10}", 1).running(300, 0);
            } else {
                dump.call(6, "reduceGradients").failed(300, 5_300, 2, TIMEOUT.formatted(rank, 2));
            }
            dump.writeTo(dir);
        }

        Outcome outcome = report("hang", dir.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertEquals("""
                job ringstar (aggregator), 3 ranks, dumps from ranks 0-2
                reduceGradients #6: ranks 0-2 waiting (0, 1: CollectiveTimeoutException, waiting on rank 2; \
                2: waiting on rank 0)
                #5: rank 1 called broadcast (root 1, FLOAT 10) where ranks 0, 2 called broadcast (root 0, FLOAT 10)
                #6: rank 2 called broadcastParams (FLOAT 10) where ranks 0, 1 called reduceGradients (FLOAT 10, \
                2 tensors)
                ranks 0, 1 failed #6 reduceGradients; rank 0's error: CollectiveTimeoutException: \
                reduceGradients on rank 0 timed out after 5 s waiting for rank 2
                """, outcome.out());
    }

    @Test
    void aRankThatCompletedTheDivergingCallIsFollowedToWhereItWaits() {
        for (int rank = 0; rank < 3; rank++) {
            Dump dump = dump(rank, 3, 3_000).completed(1, 1, 0);
            Call broadcast = dump.call(2, "broadcast").root(0).data("{\"FLOAT\": 10}", 1);
            if (rank == 0) {
                // The root's broadcast ends once it has sent; the others never received.
                broadcast.ran(100, 110);
                dump.call(3, "allReduce").running(120, 1);
            } else {
                broadcast.running(100, 0);
            }
            dump.writeTo(dir);
        }

        String out = report("hang", dir.toString()).out();

        assertTrue(out.contains("\nbroadcast #2: ranks 1, 2 waiting (waiting on rank 0); rank 0 completed it, then #3 "
                + "allReduce (waiting on rank 1)\n"), out);
    }

    @Test
    void aRankOneCallOutOfStepIsShownAtFiveSequenceNumbersAndCountedAfter() {
        for (int rank = 0; rank < 2; rank++) {
            Dump dump = dump(rank, 2, 1_000);
            for (int sequence = 1; sequence <= 9; sequence++) {
                // Rank 1 skipped a barrier at #1: from there its calls are the others' one earlier.
                boolean barrier = rank == 0 ? sequence % 2 == 1 : sequence % 2 == 0;
                Call call = dump.call(sequence, barrier ? "barrier" : "allReduce")
                        .ran(sequence * 10, sequence * 10 + 5);
                if (barrier) {
                    call.data("{}", 0);
                }
            }
            dump.writeTo(dir);
        }

        String out = report("hang", dir.toString()).out();

        assertTrue(out.contains("every rank completed every call, #1 to #9\n"), out);
        assertTrue(out.contains("#1: rank 1 called allReduce (FLOAT 10, 2 tensors) where rank 0 called barrier\n"),
                out);
        assertTrue(out.contains("#5: rank 1 called"), out);
        assertTrue(out.endsWith("... and the calls differ at 4 more sequence numbers, up to #9\n"), out);
    }

    @Test
    void garbageAndTruncatedFilesAreNamedAndTheReportGoesOnWithTheOthers() throws Exception {
        upTo17(0, 3, 1_000).writeTo(dir);
        upTo17(1, 3, 1_000).writeTo(dir);
        Dump third = upTo17(2, 3, 1_000);
        Files.writeString(dir.resolve(third.fileName()), third.json().substring(0, 812));
        Files.writeString(dir.resolve("notes.json"), "hello, world\n");
        Files.writeString(dir.resolve("other.json"), "{\"format\": \"chrome-trace\", \"traceEvents\": []}");
        Files.writeString(dir.resolve("future.json"), upTo17(0, 3, 1_000).json().replace("\"version\": 1",
                "\"version\": 2"));
        Files.writeString(dir.resolve("README.txt"), "not read: not *.json");

        Outcome outcome = report("hang", dir.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertEquals("""
                ringstar report hang: future.json: a ringstar trace of version 2; this reader knows version 1
                ringstar report hang: notes.json: not a ringstar trace: not JSON: unexpected text at line 1 column 1: \
                hello, world
                ringstar report hang: other.json: not a ringstar trace: "format" is "chrome-trace", not \
                "ringstar-trace"
                ringstar report hang: ringstar-ringstar-rank2.json: not a ringstar trace: truncated at \
                byte 812
                """, outcome.err());
        assertEquals("""
                job ringstar (aggregator), 3 ranks, dumps from ranks 0, 1
                every rank with a dump completed every call, #1 to #17; rank 2's dump is unreadable \
                (ringstar-ringstar-rank2.json)
                """, outcome.out());
    }

    @Test
    void comparisonBeginsAtTheOldestSequenceNumberThatEveryDumpHolds() {
        // Rank 0's ring kept #11..#30, rank 1's #6..#30, rank 2's all. Ranks 1 and 2 disagree at #7, but
        // rank 0 no longer has its #7 to say which of them was right: comparison begins at #11.
        Dump zero = dump(0, 3, 2_000).dropped(10, 10).completed(11, 29, 0);
        zero.call(30, "allReduce").failed(1_000, 1_500, 1, "PeerFailureException: rank 1 is gone");
        zero.writeTo(dir);
        Dump one = dump(1, 3, 2_000).dropped(5, 5).completed(6, 29, 0);
        one.writeTo(dir);
        Dump two = dump(2, 3, 2_000).completed(1, 6, 0);
        two.call(7, "allReduce").data("{\"DOUBLE\": 3}", 1).ran(200, 210);
        two.completed(8, 29, 300);
        two.call(30, "allReduce").running(1_000, 1);
        two.writeTo(dir);

        Outcome outcome = report("hang", dir.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertTrue(outcome.out().startsWith("""
                job ringstar (aggregator), 3 ranks, dumps from ranks 0-2
                compared from #11, the oldest call that every dump holds (ranks 0, 1 dropped older ones)
                allReduce #30: ranks 0, 2 waiting (0: PeerFailureException, waiting on rank 1; 2: waiting on rank 1); \
                rank 1 never started it; its last completed call was #29 allReduce, """), outcome.out());
        assertTrue(outcome.out().endsWith("""
                rank 0 failed #30 allReduce: PeerFailureException: rank 1 is gone
                """), outcome.out());
        assertTrue(!outcome.out().contains("#7"), outcome.out());
    }

    @Test
    void whenEveryRankCompletedEverythingTheReportSaysSo() {
        dump(0, 2, 500).completed(1, 3, 0).writeTo(dir);
        dump(1, 2, 500).completed(1, 3, 0).writeTo(dir);

        Outcome outcome = report("hang", dir.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertEquals("job ringstar (aggregator), 2 ranks, dumps from ranks 0, 1\n"
                + "every rank completed every call, #1 to #3\n", outcome.out());
    }

    @Test
    void eachJobAndOwnerIsReportedApart() {
        dump(0, 2, 500).completed(1, 3, 0).writeTo(dir);
        dump(1, 2, 500).completed(1, 2, 0).writeTo(dir);
        dump(0, 1, 500).job("other job", "communicator").completed(1, 1, 0).writeTo(dir);

        Outcome outcome = report("hang", dir.toString());

        assertEquals(0, outcome.status(), outcome.err());
        assertEquals("""
                job other job (communicator), 1 rank, dumps from rank 0
                every rank completed every call, #1 to #1

                job ringstar (aggregator), 2 ranks, dumps from ranks 0, 1
                allReduce #3: rank 0 completed it; rank 1 never started it; its last completed call was #2 \
                allReduce, 20 ms before rank 0's completion
                """, outcome.out());
    }

    @Test
    void anEmptyOrMissingDirectoryOrOneOfGarbageOnlyEndsWithStatusOne() throws Exception {
        Outcome empty = report("hang", dir.toString());
        assertEquals(1, empty.status());
        assertEquals("", empty.out());
        assertEquals("ringstar report hang: no trace dump (*.json) in " + dir + "\n", empty.err());

        Path missing = dir.resolve("none");
        Outcome none = report("hang", missing.toString());
        assertEquals(1, none.status());
        assertEquals("ringstar report hang: no such directory: " + missing + "\n", none.err());

        Files.writeString(dir.resolve("x.json"), "");
        Outcome garbage = report("hang", dir.toString());
        assertEquals(1, garbage.status());
        assertEquals("ringstar report hang: x.json: not a ringstar trace: empty file\n"
                + "ringstar report hang: no readable trace dump in " + dir + "\n", garbage.err());

        assertEquals(2, report("hang").status());
        assertEquals(2, report("hang", dir.toString(), "--speed", "1").status());
        assertEquals(0, report("hang", "--help").status());
    }
}
