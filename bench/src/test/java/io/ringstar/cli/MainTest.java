package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.Transports;
import io.ringstar.bench.BenchSettings;
import io.ringstar.config.ByteSize;
import io.ringstar.config.TraceOptions;
import io.ringstar.spi.LoopbackPorts;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

// The bench and train tests run whole groups of ranks; a hang in one must fail it, not stall the build.
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MainTest {
    private final CapturedOutput output = new CapturedOutput();

    private int run(String... args) {
        return runWithEnv(Map.of(), args);
    }

    /** Runs with {@code env} as the whole environment, as a launcher would set it. */
    private int runWithEnv(Map<String, String> env, String... args) {
        return output.run(Main.standard(env), args);
    }

    private String out() {
        return output.out();
    }

    private String err() {
        return output.err();
    }

    @Test
    void helpListsTheCommands() {
        assertEquals(0, run("--help"));
        for (String command : List.of("bench", "train", "launch", "jmh")) {
            assertTrue(out().contains("  " + command + " "), out());
        }
    }

    @Test
    void commandHelpDescribesTheFlags() {
        assertEquals(0, run("bench", "--help"));
        assertTrue(out().contains("--max-bytes") && out().contains("OMP_NUM_THREADS"), out());
    }

    @Test
    void everyDeclaredOptionsFlagIsTakenByTrainAndBench() {
        List<String> flags = Transports.options().stream().flatMap(option -> option.flag().stream()).toList();
        assertTrue(flags.containsAll(List.of("trace-dir", "stall-warning")), flags.toString());
        for (String command : List.of("train", "bench")) {
            output.reset();
            assertEquals(0, run(command, "--help"));
            for (String flag : flags) {
                assertTrue(out().contains("--" + flag + "="), command + " --help lists --" + flag + ":\n" + out());
            }
            // Taken as the rank's configuration, from the flags or from the options' variables.
            Optional<DistributedConfig> config = Main.standard(Map.of()).rankConfig(new String[] {command,
                "--trace-dir", "traces", "--stall-warning", "off"});
            assertEquals(Optional.of("traces"), config.flatMap(c -> c.option(TraceOptions.TRACE_DIR_OPTION)));
            assertEquals(Optional.of("off"), config.flatMap(c -> c.option(TraceOptions.STALL_WARNING_OPTION)));
            config = Main.standard(Map.of("RINGSTAR_TRACE_DIR", "/tmp/t", "RINGSTAR_STALL_WARNING", "5s"))
                    .rankConfig(new String[] {command});
            assertEquals(Optional.of("/tmp/t"), config.flatMap(c -> c.option(TraceOptions.TRACE_DIR_OPTION)));
            assertEquals(Optional.of("5s"), config.flatMap(c -> c.option(TraceOptions.STALL_WARNING_OPTION)));
            assertEquals(2, run(command, "--stall-warning", "soon"));
            assertTrue(err().contains("soon"), err());
        }
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

    /** A command written as a plain picocli Callable, as a command from another package may be. */
    @CommandLine.Command(name = "echo", header = "prints its word")
    static final class EchoCommand implements Callable<Integer> {
        @CommandLine.Option(names = "--word", paramLabel = "W", description = "the word")
        String word;
        @CommandLine.Option(names = "--status", paramLabel = "N", description = "the exit status")
        int status;

        @Override
        public Integer call() throws UsageException {
            if ("".equals(word)) {
                throw new UsageException("--word must not be empty");
            }
            return status;
        }
    }

    @Test
    void aPicocliCallableIsACommandToo() {
        assertEquals(0, output.run(new Main(List.of(new EchoCommand())), "--help"));
        assertTrue(out().contains("  echo ") && out().contains("prints its word"), out());
        assertEquals(3, output.run(new Main(List.of(new EchoCommand())), "echo", "--word", "x", "--status", "3"));
        assertEquals(2, output.run(new Main(List.of(new EchoCommand())), "echo", "--word", ""));
        assertTrue(err().contains("ringstar echo: --word must not be empty"), err());
        assertEquals(2, output.run(new Main(List.of(new EchoCommand())), "echo", "--wrod", "x"));
        assertTrue(err().contains("unknown flag '--wrod'") && err().contains("--word"), err());
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
        BenchSettings settings = BenchCommand.parse(
                List.of("--type", "double", "--min-bytes", "3", "--max-bytes", "100"), Map.of());
        assertEquals(List.of(8L, 16L, 32L, 64L), settings.sizes());
    }

    @Test
    void benchChecksEveryRowAtAnOddWorldSize() {
        int status = run("bench", "--world-size", "3", "--max-bytes", "8K", "--op", "all", "--type", "double",
                "--iters", "2", "--warmup", "1", "--chunk-bytes", "1K", "--timeout", "30");
        assertEquals(0, status, out() + err());
        long rows = out().lines().filter(line -> !line.startsWith("#")).count();
        // Sizes 8..8K, two algorithms, three operations (reduceinto's result array checked like reduce's).
        assertEquals(11 * 2 * 3, rows, out());
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
        // Without a secret the transport warns, in its log; the command adds no second warning of its own.
        assertFalse(err().contains("UNAUTHENTICATED"), err());
    }

    @Test
    void oneRankPerProcessNeedsANetworkTransportAndACoordinator() {
        assertEquals(2, run("bench", "--rank", "0", "--world-size", "2", "--transport", "inproc", "--coordinator",
                "127.0.0.1:29500"));
        assertTrue(err().contains("--transport netty"), err());
        assertEquals(2, run("bench", "--rank", "0", "--world-size", "2"));
        assertTrue(err().contains("--coordinator"), err());
        assertEquals(2, run("bench", "--rank", "2", "--world-size", "2", "--transport", "netty",
                "--coordinator", "127.0.0.1:29500"));
        assertEquals(2, run("bench", "--transport", "carrier-pigeon"));
    }

    @Test
    void aLaunchersVariablesMakeThisProcessOneRankAndArePrinted() {
        // A group of one over Netty, placed by Open MPI's variables, with the default coordinator port
        // replaced by a free one through torchrun's MASTER_* (both sources are read together).
        int port = LoopbackPorts.free();
        int status = runWithEnv(Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "1", "MASTER_ADDR",
                "127.0.0.1", "MASTER_PORT", Integer.toString(port)), "bench", "--max-bytes", "64", "--iters", "1",
                "--warmup", "1");
        assertEquals(0, status, out() + err());
        assertTrue(out().contains("# config: rank 0 (OMPI_COMM_WORLD_RANK), world size 1 (OMPI_COMM_WORLD_SIZE),"
                + " coordinator 127.0.0.1:" + port + " (MASTER_ADDR:MASTER_PORT), transport netty (default)"), out());
        assertTrue(out().contains("# all results right"), out());
    }

    @Test
    void contradictorySettingsStopBeforeAnyConnection() {
        assertEquals(2, runWithEnv(Map.of("RANK", "1", "WORLD_SIZE", "3", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT",
                "1"), "bench", "--rank", "0"));
        assertTrue(err().contains("0 (--rank) but 1 (RANK)"), err());
        assertEquals(2, runWithEnv(Map.of("SLURM_PROCID", "1"), "bench"));
        assertTrue(err().contains("world size") && err().contains("--world-size"), err());
        assertEquals(2, runWithEnv(Map.of("RANK", "1", "WORLD_SIZE", "3"), "bench"));
        assertTrue(err().contains("--coordinator") && err().contains("MASTER_ADDR"), err());
    }

    @Test
    void withoutARankStrayLauncherVariablesAreIgnored() {
        int status = runWithEnv(Map.of("WORLD_SIZE", "7", "MASTER_ADDR", "192.0.2.1", "MASTER_PORT", "1"), "bench",
                "--world-size", "3", "--transport", "inproc", "--max-bytes", "64", "--iters", "1", "--warmup", "1");
        assertEquals(0, status, out() + err());
        assertTrue(out().contains("# config: world size 3 as threads of this process"), out());
    }

    @Test
    void launchHelpAndUsageErrors() {
        assertEquals(0, run("launch", "--help"));
        assertTrue(out().contains("--nproc") && out().contains("[rank r]"), out());
        assertEquals(2, run("launch", "--nproc", "2"));
        assertTrue(err().contains("after '--'"), err());
        assertEquals(2, run("launch", "--", "bench"));
        assertTrue(err().contains("--nproc N is required"), err());
        assertEquals(2, run("launch", "--nproc", "0", "--", "bench"));
        assertEquals(2, run("launch", "--nproc", "2", "--"));
    }

    /** Rank 0's "train done" line for one algorithm, or fails the test. */
    private String doneLine(String algorithm) {
        return out().lines().filter(line -> line.startsWith("train done: " + algorithm)).findFirst()
                .orElseThrow(() -> new AssertionError("no 'train done: " + algorithm + "' line in\n" + out()));
    }

    @Test
    void trainRunsBothAlgorithmsOverNettyAtThreeRanks() {
        int status = run("train", "--world-size", "3", "--transport", "netty", "--steps", "40", "--log-every", "10",
                "--batch-size", "60", "--samples", "3000", "--eval-size", "600", "--features", "32", "--hidden", "16",
                "--timeout", "30");
        assertEquals(0, status, out() + err());
        assertTrue(out().contains("# config: world size 3 as threads of this process"), out());
        // Four progress lines per algorithm, printed by rank 0 alone, with the reduceGradients calls' statistics.
        assertEquals(8, out().lines().filter(line -> line.matches("step +\\d+/40 .*comm +\\d+%  reduceGradients"
                + " p50 [0-9.]+ ms p99 [0-9.]+ ms waiting +\\d+%")).count(), out());
        String ps = doneLine("ps sync, 3 ranks");
        String ring = doneLine("ring sync, 3 ranks");
        // Both start from the same parameters and average the same gradients, so they end at the same loss.
        String psLoss = ps.replaceAll(".*final loss ([0-9.]+).*", "$1");
        assertEquals(psLoss, ring.replaceAll(".*final loss ([0-9.]+).*", "$1"), out());
        double accuracy = Double.parseDouble(ring.replaceAll(".*held-out accuracy ([0-9.]+)%.*", "$1"));
        assertTrue(accuracy > 25, "10 classes: chance is 10%, 40 steps already learn more; " + ring);
    }

    @Test
    void asyncTrainingDefaultsToTheParameterServer() {
        int status = run("train", "--world-size", "3", "--transport", "inproc", "--mode", "async", "--steps", "30",
                "--log-every", "10", "--batch-size", "60", "--samples", "3000", "--eval-size", "600", "--features",
                "32", "--hidden", "16", "--max-staleness", "2", "--timeout", "30");
        assertEquals(0, status, out() + err());
        doneLine("ps async, 3 ranks");
        assertTrue(out().lines().noneMatch(line -> line.startsWith("train: ") && line.contains(" ring ")), out());
    }

    @Test
    void trainUsageErrorsStopBeforeAnyConnection() {
        assertEquals(0, run("train", "--help"));
        assertTrue(out().contains("--max-staleness") && out().contains("--algorithm") && out().contains("--data"),
                out());
        assertEquals(2, run("train", "--mode", "async", "--algorithm", "ring"));
        assertTrue(err().contains("the ring is always synchronous"), err());
        assertEquals(2, run("train", "--world-size", "7", "--batch-size", "240"));
        assertTrue(err().contains("--batch-size 240 does not split evenly among the 7 ranks"), err());
        assertEquals(2, run("train", "--data", "/nonexistent/train-images-idx3-ubyte"));
        assertTrue(err().contains("/nonexistent/train-images-idx3-ubyte"), err());
        assertEquals(2, run("train", "--algorithm", "tree"));
        assertEquals(2, run("train", "--steps", "0"));
        assertTrue(err().contains("--steps"), err());
        // None of these printed a configuration line: they stopped before opening a transport.
        assertTrue(out().lines().noneMatch(line -> line.startsWith("# config:")), out());
    }

    @Test
    void convNetUsageErrorsStopBeforeAnyConnection() {
        assertEquals(2, run("train", "--model", "convnet", "--mode", "async", "--algorithm", "all"));
        assertTrue(err().contains("--mode async is the parameter server's alone"), err());
        assertEquals(2, run("train", "--model", "convnet", "--algorithm", "tree"));
        assertTrue(err().contains("--algorithm must be one of ps|ring|both|all"), err());
        assertEquals(2, run("train", "--model", "convnet", "--resume", "--slow-rank", "1"));
        assertTrue(err().contains("--model convnet does not take --slow-rank, --resume"), err());
        assertEquals(2, run("train", "--model", "convnet", "--csv", "x.csv"));
        assertTrue(err().contains("--csv does not apply to --model convnet"), err());
        assertEquals(2, run("train", "--plot", "x.png"));
        assertTrue(err().contains("--plot draws the runs of --model convnet"), err());
        assertEquals(2, run("train", "--model", "convnet", "--mode", "async", "--world-size", "1"));
        assertTrue(err().contains("--mode async needs at least 2 ranks"), err());
        assertTrue(out().lines().noneMatch(line -> line.startsWith("# config:")), out());
    }
}
