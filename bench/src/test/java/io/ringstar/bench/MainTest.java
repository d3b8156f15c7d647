package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class MainTest {
    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();

    private int run(String... args) {
        PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);
        return Main.standard().run(args, out, err);
    }

    private String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpListsTheCommands() {
        assertEquals(0, run("--help"));
        assertTrue(out().contains("bench") && out().contains("jmh"), out());
    }

    @Test
    void commandHelpDescribesTheFlags() {
        assertEquals(0, run("bench", "--help"));
        assertTrue(out().contains("--max-bytes") && out().contains("OMP_NUM_THREADS"), out());
    }

    @Test
    void usageErrorsExitWithStatus2AndSayWhatIsWrong() {
        assertEquals(2, run());
        assertEquals(2, run("frobnicate"));
        assertTrue(err().contains("unknown command 'frobnicate'"), err());
        assertEquals(2, run("--verbose"));
        assertEquals(2, run("bench", "--world-sise", "4"));
        assertTrue(err().contains("unknown flag '--world-sise'"), err());
        assertEquals(2, run("bench", "--max-bytes", "lots"));
        assertTrue(err().contains("'lots' is not a size"), err());
        assertEquals(2, run("bench", "--algorithm", "tree"));
        assertEquals(2, run("bench", "--min-bytes", "1M", "--max-bytes", "1K"));
        assertEquals(2, run("jmh", "-f", "many"));
    }

    @Test
    void byteSizesTakeBinarySuffixes() {
        assertEquals(4, ByteSize.parse("4"));
        assertEquals(64L << 10, ByteSize.parse("64K"));
        assertEquals(16L << 20, ByteSize.parse("16m"));
        assertEquals(1L << 30, ByteSize.parse("1GiB"));
        assertEquals("64M", ByteSize.format(64L << 20));
        assertEquals("1000", ByteSize.format(1000));
        assertThrows(IllegalArgumentException.class, () -> ByteSize.parse("-1"));
    }

    @Test
    void sizesArePowersOfTwoThatHoldAnElement() throws UsageException {
        BenchCommand.Settings settings = BenchCommand.parse(
                List.of("--type", "double", "--min-bytes", "3", "--max-bytes", "100"));
        assertEquals(List.of(8L, 16L, 32L, 64L), settings.sizes());
    }

    @Test
    void benchChecksEveryRowAtAnOddWorldSize() {
        int status = run("bench", "--world-size", "3", "--max-bytes", "8K", "--op", "all", "--type", "double",
                "--iters", "2", "--warmup", "1", "--chunk-bytes", "1K", "--timeout", "30");
        assertEquals(0, status, out() + err());
        long rows = out().lines().filter(line -> !line.startsWith("#")).count();
        assertEquals(11 * 2 * 2, rows, out()); // sizes 8..8K, two algorithms, two operations
        assertTrue(out().contains("# all results right"), out());
    }

    @Test
    void benchRunsOverNettyWithEveryRankOnItsOwnSockets() {
        int status = run("bench", "--transport", "netty", "--world-size", "3", "--min-bytes", "4", "--max-bytes", "64K",
                "--iters", "2", "--warmup", "1", "--chunk-bytes", "4K", "--timeout", "30");
        assertEquals(0, status, out() + err());
        assertTrue(out().contains("transport netty"), out());
        long rows = out().lines().filter(line -> !line.startsWith("#")).count();
        assertEquals(15 * 2, rows, out()); // sizes 4..64K, two algorithms
        assertTrue(out().contains("# all results right"), out());
    }

    @Test
    void oneRankPerProcessNeedsANetworkTransportAndACoordinator() {
        assertEquals(2, run("bench", "--rank", "0", "--world-size", "2", "--transport", "inproc"));
        assertTrue(err().contains("--transport netty"), err());
        assertEquals(2, run("bench", "--rank", "0", "--world-size", "2"));
        assertTrue(err().contains("--coordinator"), err());
        assertEquals(2, run("bench", "--rank", "2", "--world-size", "2", "--transport", "netty",
                "--coordinator", "127.0.0.1:29500"));
        assertEquals(2, run("bench", "--transport", "carrier-pigeon"));
    }
}
