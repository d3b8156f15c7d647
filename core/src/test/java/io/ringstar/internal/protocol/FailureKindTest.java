package io.ringstar.internal.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PayloadCorruptionException;
import io.ringstar.PeerFailureException;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FailureKindTest {
    @Test
    void codesAreUniqueFitAByteAndRoundTrip() {
        Set<Integer> seen = new HashSet<>();
        for (FailureKind kind : FailureKind.values()) {
            assertTrue(seen.add(kind.code()), kind + " shares code " + kind.code());
            assertTrue(kind.code() > 0 && kind.code() <= 255, kind + ": " + kind.code());
            assertTrue(FailureKind.isKnown(kind.code()));
            assertSame(kind, FailureKind.fromCode(kind.code()));
        }
    }

    @Test
    void theWireCodesStayWhatPeersAlreadySend() {
        assertEquals(1, FailureKind.TIMEOUT.code());
        assertEquals(2, FailureKind.PEER_FAILURE.code());
        assertEquals(3, FailureKind.MISMATCH.code());
        assertEquals(4, FailureKind.OTHER.code());
        assertEquals(5, FailureKind.CORRUPTION.code());
    }

    @Test
    void anUnknownCodeIsRefusedNamingItAndTheKnownOnes() {
        for (long code : new long[] {0, 6, 255, -1, 1L << 40}) {
            assertFalse(FailureKind.isKnown(code));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FailureKind.fromCode(code));
            assertEquals("unknown failure kind code " + code + "; the known codes are 1 TIMEOUT, 2 PEER_FAILURE, "
                    + "3 MISMATCH, 4 OTHER, 5 CORRUPTION", e.getMessage());
        }
    }

    @Test
    void eachExceptionTypeHasItsKindAndEachKindMakesItsType() {
        CollectiveException[] failures = {
            new CollectiveTimeoutException("op", 0, 1, "t"),
            new PeerFailureException("op", 0, 1, "p"),
            new CollectiveMismatchException("op", 0, 1, "m"),
            new CollectiveException("op", 0, 1, "o"),
            new PayloadCorruptionException("op", 0, 1, "c"),
        };
        FailureKind[] kinds = {FailureKind.TIMEOUT, FailureKind.PEER_FAILURE, FailureKind.MISMATCH, FailureKind.OTHER,
            FailureKind.CORRUPTION};
        for (int i = 0; i < failures.length; i++) {
            assertSame(kinds[i], FailureKind.of(failures[i]));
            CollectiveException made = kinds[i].create("again", 2, 3, "detail", failures[i]);
            assertSame(failures[i].getClass(), made.getClass());
            assertEquals(2, made.rank());
            assertEquals(3, made.peerRank());
            assertSame(failures[i], made.getCause());
        }
    }
}
