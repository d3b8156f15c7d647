package io.ringstar.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ping-pong fixture behind {@link PingPongBenchmark}: over each medium the echo returns exactly
 * the bytes sent, message after message, and close stops the echo thread (and the shared driver).
 * Correctness only; no timing.
 */
class PingPongPairTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** Odd sizes around the benchmark's, the largest one byte over 64 KiB. */
    private static final int[] SIZES = {1, 8, 1023, 65_537, 3};
    private static final int MAX_BYTES = 65_537;

    @ParameterizedTest
    @ValueSource(strings = {"inproc", "netty", "aeron-udp"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void echoesEveryByteAndStopsOnClose(String medium) {
        PingPongPair pair = PingPongPair.open(medium, MAX_BYTES, TIMEOUT);
        try {
            assertEchoes(pair);
        } finally {
            pair.close();
        }
        assertFalse(pair.echoRunning(), "the echo thread still runs after close");
    }

    @Test
    @Tag("slow")
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aeronIpcThroughASharedDriverProcessEchoesAndCleansUp() {
        PingPongPair pair = PingPongPair.open("aeron-ipc", MAX_BYTES, TIMEOUT);
        Path driverDirectory = Path.of(pair.sharedDriverDirectory());
        try {
            assertTrue(Files.isDirectory(driverDirectory), "no driver directory " + driverDirectory);
            assertEchoes(pair);
        } finally {
            pair.close();
        }
        assertFalse(pair.echoRunning(), "the echo thread still runs after close");
        assertFalse(Files.exists(driverDirectory), "the shared driver left " + driverDirectory + " behind");
    }

    @Test
    void refusesAnUnknownMedium() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> PingPongPair.open("carrier-pigeon", 8, TIMEOUT));
        assertTrue(refused.getMessage().contains("carrier-pigeon"), refused.getMessage());
    }

    private static void assertEchoes(PingPongPair pair) {
        for (int round = 0; round < 3; round++) {
            for (int size : SIZES) {
                ByteBuffer ping = ByteBuffer.allocateDirect(size);
                for (int i = 0; i < size; i++) {
                    // Differs per byte, per size and per round, so a stale or shifted echo shows.
                    ping.put(i, (byte) (i * 7 + size * 13 + round * 101));
                }
                ByteBuffer pong = ByteBuffer.allocateDirect(size);
                pair.roundTrip(ping, pong);
                assertEquals(0, ping.position(), "roundTrip moved the ping's position");
                assertEquals(size, pong.position(), "the pong's position did not advance by the message");
                pong.flip();
                assertEquals(-1, pong.mismatch(ping), pair.medium() + ": the echo of " + size + " B in round " + round
                        + " differs at byte " + pong.mismatch(ping));
            }
        }
    }
}
