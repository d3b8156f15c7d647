package io.ringstar.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ringstar jmh [JMH options] [benchmark regex]}: the JMH microbenchmarks compiled into this
 * jar, run by JMH's own command line ({@link org.openjdk.jmh.Main}), which receives the arguments
 * unchanged ({@code -h} included: it prints JMH's options).
 */
@CommandLine.Command(name = "jmh",
        header = "run the JMH microbenchmarks in this jar (arguments go to JMH; -l lists them)",
        synopsisHeading = "%nUsage: ", customSynopsis = "ringstar jmh [JMH options] [benchmark regex...]",
        description = {"", "Runs the JMH benchmarks compiled into this jar; every argument goes to JMH unchanged.",
            "  ReductionBenchmark      Reduction.add (float, double) and combine (-p op=SUM,MAX,PROD",
            "                          -p type=FLOAT,DOUBLE,HALF,BFLOAT16,INT,LONG) against Reduction.copy,",
            "                          4K/1M/64M; compare the :bytes scores (buffer bytes per second)",
            "  AggregatorBenchmark     reduceGradients of ps and ring, 4 ranks as threads, 4M/64M floats;",
            "                          -p checksum=none,crc32c adds the cost of the per-message CRC32C",
            "  PingPongBenchmark       round trip of 8 B/1 KiB/64 KiB between 2 ranks, per transport:",
            "                          inproc, netty (loopback TCP), aeron-udp (a driver per rank),",
            "                          aeron-ipc (both ranks on a shared driver process); us, p50/p99",
            "  MessageHeaderBenchmark  the 64-byte collective header: write, read, and one message",
            "                          sent and checked by CollectiveCall through memory; ns",
            "Defaults per benchmark: 1 fork, warmup 3 x 1 s, measurement 5 x 1 s; the forked JVM gets",
            "the --add-exports/--add-opens flags that ND4J and Agrona need. Run with OMP_NUM_THREADS=1.", ""},
        footer = {"", "JMH's own options: ringstar jmh -h", "",
            "Examples:",
            "  ringstar jmh -l",
            "  ringstar jmh ReductionBenchmark",
            "  ringstar jmh -f 1 -wi 2 -i 3 AggregatorBenchmark -p algorithm=ring",
            "  ringstar jmh PingPong -p transport=netty,aeron-ipc -p bytes=8",
            "  ringstar jmh 'Header' -f 1 -wi 1 -i 2 -w 1s -r 1s"})
public final class JmhCommand implements Command {
    @Option(names = "--help", usageHelp = true, description = "this text (-h is JMH's help)")
    private boolean help;
    @Parameters(paramLabel = "ARG", description = "JMH's options and benchmark patterns")
    private List<String> arguments = new ArrayList<>();

    @Override
    public void declareOptions(CommandSpec spec) {
        // Every argument is JMH's: its options are not this command's to check.
        spec.parser().unmatchedOptionsArePositionalParams(true);
    }

    @Override
    public int run(PrintStream out, PrintStream err) throws UsageException {
        String[] jmhArgs = arguments.toArray(new String[0]);
        try {
            // Parsed here first so that a bad option is a usage error (status 2); JMH itself exits with 1.
            new CommandLineOptions(jmhArgs);
        } catch (CommandLineOptionException e) {
            throw new UsageException(e.getMessage());
        }
        try {
            org.openjdk.jmh.Main.main(jmhArgs);
        } catch (Exception e) {
            throw new IllegalStateException("JMH failed: " + e, e);
        }
        return 0;
    }
}
