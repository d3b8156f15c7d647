package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.Transport;
import io.ringstar.ranks.RankPlacement;
import io.ringstar.ranks.RankThreads;
import io.ringstar.spi.LoopbackPorts;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * A run whose ranks fail: one line per failed rank on the terminal, naming the rank, the operation
 * and the cause, and the stack traces only with {@code --verbose}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailureReportTest {
    private final CapturedOutput output = new CapturedOutput();

    /**
     * Three ranks as threads over the in-process transport; rank 1 gives up before the barrier that
     * the others wait in, so they fail because of it (its transport closes).
     */
    @CommandLine.Command(name = "give-up")
    static final class GivingUp implements Command {
        @Override
        public void declareOptions(CommandSpec spec) {
            CommandDefaults.declareVerbose(spec);
        }

        @Override
        public int run(PrintStream out, PrintStream err) throws UsageException {
            RankPlacement placement = PlacementFlags.resolve(Map.of("transport", "inproc", "world-size", "3"),
                    Map.of(), Map.of(), 3, Duration.ofSeconds(20));
            out.println("# config: " + placement.description());
            List<Transport> transports = List.of();
            try (RankThreads threads = new RankThreads(placement)) {
                transports = threads.openTransports(placement);
                threads.runLending(transports, (local, transport) -> {
                    if (local == 1) {
                        throw new IllegalStateException("rank one gives up");
                    }
                    transport.barrier();
                    return null;
                }, Duration.ofSeconds(30));
            } finally {
                transports.forEach(Transport::close);
            }
            return 0;
        }
    }

    private int run(String... args) {
        output.reset();
        return output.run(new Main(List.of(new GivingUp())), args);
    }

    @Test
    void eachFailedRankGetsOneLineAndNoStackTrace() {
        assertEquals(1, run("give-up"), output.err());
        List<String> lines = output.err().lines().toList();
        assertEquals(3, lines.size(), "one line per rank: " + output.err());
        assertEquals("ringstar give-up: rank 1 failed: IllegalStateException: rank one gives up", lines.get(0),
                "the rank that failed first, first");
        for (int rank : new int[] {0, 2}) {
            String line = lines.stream().filter(l -> l.startsWith("ringstar give-up: rank " + rank + " failed"))
                    .findFirst().orElseThrow(() -> new AssertionError("no line for rank " + rank + ": " + lines));
            // Rank 1's closed transport, or that of the other rank it already stopped.
            assertTrue(line.contains(" in barrier (peer rank "), "the operation and the peer that caused it: " + line);
        }
        assertFalse(output.err().contains("\tat "), output.err());
        assertTrue(output.out().startsWith("# config: "), "the ranks' own output comes first: " + output.out());
    }

    @Test
    void verboseAddsTheStackTraces() {
        assertEquals(1, run("give-up", "--verbose"), output.err());
        assertTrue(output.err().contains("ringstar give-up: rank 1 failed: IllegalStateException: rank one gives up"),
                output.err());
        assertTrue(output.err().contains("java.lang.IllegalStateException: rank one gives up\n\tat "),
                output.err());
        assertTrue(output.err().contains("\tat " + FailureReportTest.class.getName()), output.err());
    }

    @Test
    void aRealBenchRankThatCannotJoinItsGroupFailsInOneLine() {
        // Rank 1 of 2, and nobody listens where rank 0 should: it gives up after its 2 s timeout.
        String coordinator = "127.0.0.1:" + LoopbackPorts.free();
        output.reset();
        int status = output.run(Main.standard(Map.of()), "bench", "--rank", "1", "--world-size", "2", "--transport",
                "netty", "--coordinator", coordinator, "--timeout", "2", "--max-bytes", "64");
        assertEquals(1, status, output.out() + output.err());
        List<String> lines = output.err().lines().toList();
        assertEquals(1, lines.size(), output.err());
        assertTrue(lines.get(0).startsWith("ringstar bench: rank 1 failed in "), lines.get(0));
        assertFalse(output.err().contains("\tat "), output.err());
    }
}
