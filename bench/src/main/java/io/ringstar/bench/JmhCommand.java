package io.ringstar.bench;

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
        out.println("  ReductionBenchmark    Reduction.add (float, double) against Reduction.copy, 64K/1M/16M");
        out.println("  AggregatorBenchmark   reduceGradients of ps and ring, 4 ranks as threads, 4M/64M floats");
        out.println("Defaults per benchmark: 1 fork, warmup 3 x 1 s, measurement 5 x 1 s; the forked JVM gets");
        out.println("the --add-exports/--add-opens flags that ND4J needs. Run with OMP_NUM_THREADS=1.");
        out.println();
        out.println("Examples:");
        out.println("  " + Main.PROGRAM + " jmh -l");
        out.println("  " + Main.PROGRAM + " jmh ReductionBenchmark");
        out.println("  " + Main.PROGRAM + " jmh -f 1 -wi 2 -i 3 AggregatorBenchmark -p algorithm=ring");
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
