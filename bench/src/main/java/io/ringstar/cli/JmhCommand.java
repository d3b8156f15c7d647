package io.ringstar.cli;

import java.io.PrintStream;
import java.util.List;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;

/**
 * {@code ringstar jmh [JMH options] [benchmark regex]}: the JMH microbenchmarks compiled into this
 * jar, run by JMH's own command line ({@link org.openjdk.jmh.Main}), which receives the arguments
 * unchanged.
 */
final class JmhCommand implements Command {

    @Override
    public String name() {
        return "jmh";
    }

    @Override
    public String summary() {
        return "run the JMH microbenchmarks in this jar (arguments go to JMH; -l lists them)";
    }

    @Override
    public void printHelp(PrintStream out) {
        out.println("Usage: " + Main.PROGRAM + " jmh [JMH options] [benchmark regex...]");
        out.println();
        out.println("Runs the JMH benchmarks compiled into this jar; every argument goes to JMH unchanged.");
        out.println("  ReductionBenchmark      Reduction.add (float, double) against Reduction.copy, 4K/1M/64M;");
        out.println("                          compare the :bytes scores (buffer bytes per second)");
        out.println("  AggregatorBenchmark     reduceGradients of ps and ring, 4 ranks as threads, 4M/64M floats;");
        out.println("                          -p checksum=none,crc32c adds the cost of the per-message CRC32C");
        out.println("  PingPongBenchmark       round trip of 8 B/1 KiB/64 KiB between 2 ranks, per transport:");
        out.println("                          inproc, netty (loopback TCP), aeron-udp (a driver per rank),");
        out.println("                          aeron-ipc (both ranks on a shared driver process); us, p50/p99");
        out.println("  MessageHeaderBenchmark  the 56-byte collective header: write, read, and one message");
        out.println("                          sent and checked by CollectiveCall through memory; ns");
        out.println("Defaults per benchmark: 1 fork, warmup 3 x 1 s, measurement 5 x 1 s; the forked JVM gets");
        out.println("the --add-exports/--add-opens flags that ND4J and Agrona need. Run with OMP_NUM_THREADS=1.");
        out.println();
        out.println("Examples:");
        out.println("  " + Main.PROGRAM + " jmh -l");
        out.println("  " + Main.PROGRAM + " jmh ReductionBenchmark");
        out.println("  " + Main.PROGRAM + " jmh -f 1 -wi 2 -i 3 AggregatorBenchmark -p algorithm=ring");
        out.println("  " + Main.PROGRAM + " jmh PingPong -p transport=netty,aeron-ipc -p bytes=8");
        out.println("  " + Main.PROGRAM + " jmh 'Header' -f 1 -wi 1 -i 2 -w 1s -r 1s");
        out.println();
        out.println("JMH's options:");
        try {
            new CommandLineOptions().showHelp();
        } catch (CommandLineOptionException | java.io.IOException e) {
            out.println("  (JMH's help is not available: " + e.getMessage() + ")");
        }
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
        String[] jmhArgs = args.toArray(new String[0]);
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
