package io.ringstar.internal.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstar.spi.TransportProbe;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The stall warning's sentence for each answer a peer can give: a late rank between calls, one
 * still in an earlier call, one that never called, one that does not answer, ranks waiting too,
 * ranks past the call; and its tail, "Late: ...", which names the late ranks and no other.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class StallWarningTest {
    private static final String TAIL = " The job goes on until the timeout.";
    /** What this rank's own element of the answers holds: anything, as it is never read. */
    private static final long OWN = 0x1234_5678L;
    private static final long SECOND = 1_000_000_000L;

    private static String describe(int rank, String operation, long sequence, long waitedNanos, long... answers) {
        return new StallWarning(rank, answers.length, Duration.ofSeconds(1)).describe(operation, sequence, waitedNanos,
                answers);
    }

    private static long between(long lastCompleted, long agoNanos) {
        return RankStatus.pack(RankStatus.BETWEEN_CALLS, lastCompleted, agoNanos);
    }

    private static long in(long sequence, long agoNanos) {
        return RankStatus.pack(RankStatus.IN_CALL, sequence, agoNanos);
    }

    @Test
    void aLateRankBetweenCallsAndTheRanksWaitingForIt() {
        assertEquals("allReduce #18 on rank 1: waiting 5.0 s; rank 2 has not started it (its last call, #17, "
                + "completed 5.2 s ago); ranks 0 and 3 are waiting too. Late: rank 2." + TAIL,
                describe(1, "allReduce", 18, 5 * SECOND, in(18, 5 * SECOND), OWN, between(17, 5_200_000_000L),
                        in(18, 4 * SECOND)));
    }

    @Test
    void aLateRankStillInAnEarlierCall() {
        assertEquals("reduceGradients #18 on rank 0: waiting 2.5 s; rank 1 has not started it (it is still in #16, "
                + "started 3.0 s ago); rank 2 is waiting too. Late: rank 1." + TAIL,
                describe(0, "reduceGradients", 18, 2_500_000_000L, OWN, in(16, 3 * SECOND), in(18, SECOND)));
    }

    @Test
    void aRankThatNeverCalled() {
        assertEquals("barrier #1 on rank 2: waiting 1.0 s; rank 0 has not started it (it has made no call yet); "
                + "rank 1 is waiting too. Late: rank 0." + TAIL,
                describe(2, "barrier", 1, SECOND, RankStatus.pack(RankStatus.NO_CALL, 0, 0), in(1, SECOND), OWN));
    }

    @Test
    void ranksThatDoNotAnswerAreNamedButNotLate() {
        assertEquals("allReduce #5 on rank 0: waiting 1.0 s; ranks 1 and 3 do not answer (stopped, or cut off); "
                + "rank 2 is waiting too. Late: none; not answering: ranks 1 and 3." + TAIL,
                describe(0, "allReduce", 5, SECOND, OWN, TransportProbe.NO_ANSWER, in(5, SECOND),
                        TransportProbe.NO_ANSWER));
        assertEquals("allReduce #5 on rank 2: waiting 1.0 s; rank 0 does not answer (stopped, or cut off); rank 1 is "
                + "waiting too. Late: none; not answering: rank 0." + TAIL,
                describe(2, "allReduce", 5, SECOND, TransportProbe.NO_ANSWER, in(5, SECOND), OWN));
    }

    @Test
    void ranksPastTheCallAreNotLate() {
        assertEquals("allReduce #5 on rank 0: waiting 1.5 s; rank 1 is past it, in #6; rank 2 has completed it (its "
                + "last call, #5, completed 0.3 s ago); rank 3 is waiting too; every rank has reached it (a slow "
                + "transfer, not a missing rank). Late: none." + TAIL,
                describe(0, "allReduce", 5, 1_500_000_000L, OWN, in(6, 0), between(5, 300_000_000L), in(5, 0)));
    }

    @Test
    void everyLateRankIsListedInTheTailAndNoOther() {
        assertEquals("allReduce #10 on rank 4: waiting 1.0 s; rank 0 has not started it (it has made no call yet); "
                + "rank 1 has not started it (its last call, #9, completed 2.0 s ago); rank 2 has not started it (it "
                + "is still in #8, started 7.5 s ago); rank 5 is past it, in #11; rank 3 is waiting too. "
                + "Late: ranks 0, 1 and 2." + TAIL,
                describe(4, "allReduce", 10, SECOND, RankStatus.pack(RankStatus.NO_CALL, 0, 0), between(9, 2 * SECOND),
                        in(8, 7_500_000_000L), in(10, 0), OWN, in(11, 0)));
    }

    @Test
    void aRankBehindButBlockedOnAPeerIsNotTheLateOne() {
        // Rank 1 is still in #4 but blocked waiting, as in a ring where rank 0 finished #4 first; rank 2 is stopped.
        assertEquals("broadcastParams #5 on rank 0: waiting 1.0 s; rank 2 does not answer (stopped, or cut off); rank "
                + "1 is still in #4, itself waiting for a peer. Late: none; not answering: rank 2." + TAIL,
                describe(0, "broadcastParams", 5, SECOND, OWN, RankStatus.pack(RankStatus.IN_CALL, 4, SECOND, true),
                        TransportProbe.NO_ANSWER));
    }

    @Test
    void aFailedRankHasNotReachedTheCall() {
        // Rank 2 failed in call #3: the call waited for will never complete, so it is no slow transfer.
        String warning = describe(0, "allReduce", 5, SECOND, OWN, in(5, 0),
                RankStatus.pack(RankStatus.FAILED, 3, 0));
        assertEquals("allReduce #5 on rank 0: waiting 1.0 s; rank 2 has failed (in or after #3); rank 1 is waiting "
                + "too. Late: none." + TAIL, warning);
    }

    @Test
    void ranksAreListedInEnglish() {
        assertEquals("rank 2", StallWarning.ranks(List.of(2)));
        assertEquals("ranks 0 and 3", StallWarning.ranks(List.of(0, 3)));
        assertEquals("ranks 0, 1 and 3", StallWarning.ranks(List.of(0, 1, 3)));
    }
}
