package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A misspelt flag or option, or a malformed variable of a launcher, is a usage error of every
 * command that runs ranks: status 2, the known names and the nearest one, no stack trace, and it is
 * found before any rank starts (no run header, no rank line, no launched process).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UsageErrorsTest {
    private final CapturedOutput output = new CapturedOutput();

    private int run(Map<String, String> env, String... args) {
        output.reset();
        return output.run(Main.standard(env), args);
    }

    /** The error said what it had to and nothing ran: no header, no ranks' output, no trace. */
    private void assertNothingRan() {
        assertEquals("", output.out(), "no header or rank output before the usage error");
        assertFalse(output.err().contains("\tat "), "no stack trace: " + output.err());
        assertFalse(output.err().contains("[rank "), "no rank was launched: " + output.err());
        assertTrue(output.err().contains("--help'."), "where the help is: " + output.err());
    }

    @Test
    void anUnknownOptionNamesTheKnownOnesAndTheNearest() {
        for (String command : List.of("bench", "train")) {
            assertEquals(2, run(Map.of(), command, "--option", "chunkByte=5"), output.err());
            assertNothingRan();
            String err = output.err();
            assertTrue(err.contains("ringstar " + command + ": option chunkByte = 5 (from --option chunkByte)"), err);
            assertTrue(err.contains("the known ones are allReduceAlgorithm"), err);
            assertTrue(err.contains("did you mean chunkBytes?"), err);
        }
    }

    @Test
    void aMalformedOptionIsAUsageErrorToo() {
        assertEquals(2, run(Map.of(), "bench", "--option", "chunkBytes"), output.err());
        assertNothingRan();
        assertEquals(2, run(Map.of(), "bench", "--option", "chunkBytes=lots"), output.err());
        assertNothingRan();
        assertTrue(output.err().contains("option chunkBytes = lots"), output.err());
    }

    @Test
    void anUnknownFlagNamesTheNearest() {
        assertEquals(2, run(Map.of(), "bench", "--max-byte", "1K"));
        assertNothingRan();
        assertTrue(output.err().contains("unknown flag '--max-byte'"), output.err());
        assertTrue(output.err().contains("Did you mean --max-bytes"), output.err());
        assertEquals(2, run(Map.of(), "train", "--step", "3"));
        assertNothingRan();
        assertTrue(output.err().contains("Did you mean --steps"), output.err());
    }

    @Test
    void aMalformedVariableIsAUsageError() {
        assertEquals(2, run(Map.of("RINGSTAR_TIMEOUT", "abc"), "bench", "--transport", "inproc"));
        assertNothingRan();
        assertTrue(output.err().contains("RINGSTAR_TIMEOUT = abc") && output.err().contains("whole number"),
                output.err());
        assertEquals(2, run(Map.of("RANK", "x", "WORLD_SIZE", "3"), "train"));
        assertNothingRan();
        assertTrue(output.err().contains("RANK = x"), output.err());
    }

    @Test
    void theLauncherChecksItsRanksCommandBeforeStartingAny() {
        Map<String, String> env = Map.of("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        assertEquals(2, run(env, "launch", "--nproc", "3", "--", "bench", "--option", "chunkByte=5"));
        assertNothingRan();
        assertTrue(output.err().contains("ringstar bench: option chunkByte = 5"), output.err());
        assertFalse(output.err().contains("ringstar launch: 3 ranks"), "no rank was started: " + output.err());
        assertEquals(2, run(env, "launch", "--nproc", "2", "--", "train", "--stepz", "3"));
        assertNothingRan();
        assertTrue(output.err().contains("unknown flag '--stepz'"), output.err());
        assertEquals(2, run(Map.of("RINGSTAR_TIMEOUT", "abc"), "launch", "--nproc", "2", "--", "train"));
        assertNothingRan();
        assertTrue(output.err().contains("RINGSTAR_TIMEOUT = abc"), output.err());
    }

    @Test
    void aCommandLineThatWouldRunPassesTheLaunchersCheck() {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        Map<String, String> rank = Map.of("RANK", "0", "WORLD_SIZE", "3", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", "29500");
        Main main = Main.standard(rank);
        java.io.PrintStream errors = new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, main.check(new String[] {"bench", "--max-bytes", "1K", "--option", "chunkBytes=4K"}, errors));
        assertEquals(0, main.check(new String[] {"train", "--model", "convnet", "--steps", "5"}, errors));
        assertEquals(0, main.check(new String[] {"bench", "--help"}, errors), "help is no usage error");
        assertEquals("", err.toString(java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(2, main.check(new String[] {"train", "--world-size", "4"}, errors), "4 here but 3 (WORLD_SIZE)");
    }
}
