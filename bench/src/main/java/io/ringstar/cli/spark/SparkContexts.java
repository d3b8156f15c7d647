package io.ringstar.cli.spark;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.VoidFunction;
import org.apache.spark.resource.ResourceProfile;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The Spark context of {@code train --spark}, in a JVM that {@link DriverJvm} found fit. A master
 * on this machine is pinned to loopback; a {@code local-cluster} master's executors get this JVM's
 * class path (absolute: a relative entry makes them fail to deserialize the task), ringstar's JVM
 * flags and their memory; a standalone master's executors get ringstar.jar through {@code spark.jars}.
 * Under spark-submit its own settings stay (the application's name, the jar it ships).
 */
public final class SparkContexts {
    private static final String LOOPBACK = "127.0.0.1";

    private SparkContexts() {
    }

    /**
     * Starts the context; the caller stops it.
     *
     * @param ringstarFlags the JVM flags ringstar needs (ND4J's, Agrona's), for executors this starts
     * @throws SparkSetupException if the executors need ringstar.jar and this runs from classes instead
     */
    public static JavaSparkContext start(SparkMaster master, String application, List<String> ringstarFlags,
            Map<String, String> env) throws SparkSetupException {
        SparkConf conf = new SparkConf().setMaster(master.url()).setIfMissing("spark.app.name", application)
                // The command's own progress lines stand for Spark's console progress bar and web UI.
                .setIfMissing("spark.ui.enabled", "false")
                .set("spark.ui.showConsoleProgress", "false");
        boolean submitted = System.getProperty(SparkMaster.SUBMIT_PROPERTY) != null;
        if (master.onThisMachine()) {
            conf.set("spark.driver.host", LOOPBACK).set("spark.driver.bindAddress", LOOPBACK);
        }
        if (master.startsExecutorJvms()) {
            String scalaVersion = scala.util.Properties.versionNumberString();
            String scalaBinary = scalaVersion.substring(0, scalaVersion.lastIndexOf('.'));
            conf.set("spark.executor.extraClassPath", String.join(File.pathSeparator, DriverJvm.classPath(true)))
                    .set("spark.executor.extraJavaOptions", String.join(" ", ringstarFlags))
                    .set("spark.executor.memory", master.executorMemoryMb() + "m")
                    // Spark's launcher reads it from the executor's environment to find its jars' folder.
                    .set("spark.executorEnv.SPARK_SCALA_VERSION", scalaBinary)
                    .set("spark.executorEnv." + DriverJvm.SPARK_LOCAL_IP, LOOPBACK);
            if (env.containsKey("OMP_NUM_THREADS")) {
                conf.set("spark.executorEnv.OMP_NUM_THREADS", env.get("OMP_NUM_THREADS"));
            }
        } else if (!master.onThisMachine() && !submitted) {
            Path code = DriverJvm.codeSource();
            if (!Files.isRegularFile(code)) {
                throw new SparkSetupException("--spark " + master.url() + ": the executors need ringstar.jar, and this"
                        + " runs from " + code + "; run bench/target/ringstar.jar (./ringstar) instead");
            }
            conf.set("spark.jars", code.toAbsolutePath().toString());
        }
        return new JavaSparkContext(conf);
    }

    /**
     * Gets the executors of a master that starts them (not {@code local}) ready before training, so
     * that their start (a JVM each) and ND4J's in them (its native libraries, a few seconds) are not
     * counted as training time: waits until they offer {@code ranks} task slots, then runs one task
     * per slot that loads ND4J. Returns at once for a {@code local} master.
     *
     * @return how long it took
     * @throws IllegalStateException if the slots are not there within {@code limit}
     */
    public static Duration warmUp(JavaSparkContext spark, SparkMaster master, int ranks, Duration limit) {
        long start = System.nanoTime();
        if (master.inDriverJvm()) {
            return Duration.ZERO;
        }
        SparkContext context = spark.sc();
        ResourceProfile profile = context.resourceProfileManager().defaultResourceProfile();
        long deadline = start + limit.toNanos();
        while (context.maxNumConcurrentTasks(profile) < ranks) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(master.url() + " offers " + context.maxNumConcurrentTasks(profile)
                        + " task slots after " + limit.toSeconds() + " s, and the job has " + ranks + " ranks");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the executors of " + master.url(), e);
            }
        }
        // As many tasks as slots, all offered at once: Spark spreads them over the executors.
        List<Integer> slots = IntStream.range(0, ranks).boxed().toList();
        spark.parallelize(slots, ranks).foreachPartition(new LoadNd4j());
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** A task that loads ND4J (its backend and native libraries) in its executor. */
    private static final class LoadNd4j implements VoidFunction<Iterator<Integer>> {
        private static final long serialVersionUID = 1L;

        @Override
        public void call(Iterator<Integer> partition) {
            Nd4j.scalar(0f).close();
        }
    }
}
