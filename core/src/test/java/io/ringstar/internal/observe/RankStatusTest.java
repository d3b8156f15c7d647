package io.ringstar.internal.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.ringstar.spi.TransportProbe;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A rank's status packed in one long: every state, sequence number and age comes back as packed
 * (ages in whole milliseconds, saturated; sequences saturated at 37 bits), and no status is ever
 * the "no answer" value -1, not even the largest of the failed state.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RankStatusTest {
    private static final long MAX_SEQUENCE = (1L << 37) - 1;
    private static final long MAX_AGE_MILLIS = (1L << 24) - 2;

    @Test
    void everyStateSequenceAndAgeComesBack() {
        int[] states = {RankStatus.NO_CALL, RankStatus.IN_CALL, RankStatus.BETWEEN_CALLS, RankStatus.FAILED};
        long[] sequences = {0, 1, 17, 1L << 36, MAX_SEQUENCE};
        long[] ages = {0, 999_999, 1_000_000, 5_200_000_000L, MAX_AGE_MILLIS * 1_000_000,
            (MAX_AGE_MILLIS + 1) * 1_000_000, Long.MAX_VALUE};
        for (int state : states) {
            for (long sequence : sequences) {
                for (long age : ages) {
                    for (boolean waiting : new boolean[] {false, true}) {
                        long status = RankStatus.pack(state, sequence, age, waiting);
                        String what = "state " + state + ", #" + sequence + ", " + age + " ns, waiting " + waiting;
                        assertNotEquals(TransportProbe.NO_ANSWER, status, what);
                        assertEquals(state, RankStatus.state(status), what);
                        assertEquals(sequence, RankStatus.sequence(status), what);
                        assertEquals(waiting, RankStatus.waiting(status), what);
                        assertEquals(Math.min(MAX_AGE_MILLIS, age / 1_000_000), RankStatus.ageMillis(status), what);
                    }
                }
            }
        }
    }

    @Test
    void theLargestStatusIsNotNoAnswer() {
        long status = RankStatus.pack(RankStatus.FAILED, Long.MAX_VALUE, Long.MAX_VALUE, true);
        assertNotEquals(TransportProbe.NO_ANSWER, status);
        assertEquals(RankStatus.FAILED, RankStatus.state(status));
        assertEquals(MAX_SEQUENCE, RankStatus.sequence(status), "a sequence past 37 bits saturates");
        assertEquals(MAX_AGE_MILLIS, RankStatus.ageMillis(status), "an age past 24 bits saturates one below all ones");
    }

    @Test
    void aNegativeAgeIsZero() {
        // nanoTime readings of two threads may cross; the age never wraps into the sequence's bits.
        long status = RankStatus.pack(RankStatus.IN_CALL, 5, -3_000_000);
        assertEquals(RankStatus.IN_CALL, RankStatus.state(status));
        assertEquals(5, RankStatus.sequence(status));
        assertEquals(0, RankStatus.ageMillis(status));
    }
}
