package io.ringstar.cli.spark;

import io.ringstar.InvalidConfigException;
import io.ringstar.spark.SparkDataParallel;
import io.ringstar.train.TrainSettings;
import io.ringstar.train.convnet.ConvNetRun;
import io.ringstar.train.convnet.SparkConvNetJob;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * {@code train --model convnet --spark MASTER} in a JVM that {@link DriverJvm} found fit: reads the
 * images, starts the Spark context, runs {@link SparkConvNetJob} and stops the context. The only
 * class of the command line that names Spark's types, so that the rest loads without Spark.
 *
 * @param master the checked master
 * @param worldSize the ranks, the number of partitions of each stage's RDD
 * @param options the options of every {@code fit}
 * @param ringstarFlags the JVM flags ringstar needs, for the executors a {@code local-cluster} master starts
 */
public record SparkTraining(SparkMaster master, int worldSize, TrainSettings settings, List<ConvNetRun> runs,
        Map<String, String> options, Path plot, List<String> ringstarFlags) {
    /** How long the executors of a master that starts them may take to offer the job's task slots. */
    private static final Duration EXECUTOR_START = Duration.ofMinutes(2);
    /**
     * SparkDataParallel logs its summary of every fit at INFO, which the job's progress lines already
     * say: only its warnings reach the console. Held here, as java.util.logging keeps loggers weakly.
     */
    private static final Logger FIT_LOG = Logger.getLogger(SparkDataParallel.class.getName());

    /**
     * Trains; blocks until every run is done.
     *
     * @return 0 when trained, 1 when the plot could not be written
     * @throws SparkSetupException for images that do not fit the flags, or options the ranks refuse
     */
    public int run(Map<String, String> env, PrintStream out, PrintStream err) throws SparkSetupException {
        SparkConvNetJob job = new SparkConvNetJob(settings, runs, options, plot, out);
        try {
            job.validate(worldSize);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            throw new SparkSetupException(e.getMessage());
        }
        FIT_LOG.setLevel(Level.WARNING);
        long start = System.nanoTime();
        JavaSparkContext spark = SparkContexts.start(master, "ringstar train convnet", ringstarFlags, env);
        try {
            Duration executors = SparkContexts.warmUp(spark, master, worldSize, EXECUTOR_START);
            String started = String.format(Locale.ROOT, "started in %.1f s%s", (System.nanoTime() - start) / 1e9,
                    master.inDriverJvm() ? "" : String.format(Locale.ROOT, ", of which %.1f s for its executors to"
                            + " offer %d task slots and load ND4J", executors.toMillis() / 1000.0, worldSize));
            job.run(spark, worldSize, master.url(), started);
            return 0;
        } catch (InvalidConfigException e) {
            throw new SparkSetupException(e.getMessage());
        } catch (IOException e) {
            err.println("ringstar train: cannot write the plot " + plot + ": " + e.getMessage());
            return 1;
        } finally {
            spark.stop();
        }
    }
}
