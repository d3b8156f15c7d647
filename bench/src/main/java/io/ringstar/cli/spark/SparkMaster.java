package io.ringstar.cli.spark;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Spark master of {@code train --spark MASTER}, checked before anything starts: {@code local},
 * {@code local[N]}, {@code local[*]} (this machine's cores), {@code local-cluster[N,CORES,MEMORY_MB]}
 * (N executor JVMs on this machine, as Spark's own tests start them), {@code spark://HOST:PORT} (a
 * standalone cluster), or, under {@code spark-submit}, the master it was given ({@link #SUBMITTED}).
 * YARN and Kubernetes masters are for {@code spark-submit}, which brings their client code.
 *
 * @param url the master as Spark takes it
 * @param slots the task slots the master offers (executors × cores), or 0 where only the cluster knows
 */
public record SparkMaster(String url, int slots) {
    /** The value of {@code --spark} without a master: the one spark-submit set ({@code spark.master}). */
    public static final String SUBMITTED = "";
    /** The system property spark-submit sets to the master it was given. */
    public static final String SUBMIT_PROPERTY = "spark.master";
    private static final Pattern LOCAL = Pattern.compile("local(?:\\[(\\*|[0-9]+)(?:,([0-9]+))?])?");
    private static final Pattern LOCAL_CLUSTER = Pattern.compile(
            "local-cluster\\[\\s*([0-9]+)\\s*,\\s*([0-9]+)\\s*,\\s*([0-9]+)\\s*]");
    private static final Pattern STANDALONE = Pattern.compile("spark://[^\\s/:,]+:[0-9]+(,[^\\s/:,]+:[0-9]+)*");
    /**
     * An executor's least memory: Spark refuses a heap below 450 MB (1.5 times the 300 MB it reserves),
     * and a JVM's usable heap is a little below its {@code -Xmx}.
     */
    private static final int MIN_EXECUTOR_MB = 512;
    private static final String FORMS = "local[N], local-cluster[N,CORES,MEMORY_MB] or spark://HOST:PORT";

    /**
     * The master that {@code text} names ({@link #SUBMITTED} for spark-submit's).
     *
     * @param submitted the master spark-submit set ({@value #SUBMIT_PROPERTY}), or {@code null} outside it
     * @throws IllegalArgumentException saying which forms are taken, if {@code text} is none of them
     */
    public static SparkMaster parse(String text, String submitted) {
        if (text.equals(SUBMITTED)) {
            if (submitted == null) {
                throw new IllegalArgumentException("--spark without a master takes spark-submit's, and this is not"
                        + " running under spark-submit; give one: " + FORMS);
            }
            return submitted.startsWith("local") ? parse(submitted, null) : new SparkMaster(submitted, 0);
        }
        String master = text.trim();
        Matcher local = LOCAL.matcher(master);
        if (local.matches()) {
            String threads = local.group(1);
            int slots = threads == null ? 1 : threads.equals("*") ? Runtime.getRuntime().availableProcessors()
                    : positive(threads, "N (threads)", master);
            return new SparkMaster(master, slots);
        }
        Matcher cluster = LOCAL_CLUSTER.matcher(master);
        if (cluster.matches()) {
            int executors = positive(cluster.group(1), "N (executors)", master);
            int cores = positive(cluster.group(2), "CORES (per executor)", master);
            int memory = positive(cluster.group(3), "MEMORY_MB (per executor)", master);
            if (memory < MIN_EXECUTOR_MB) {
                throw new IllegalArgumentException("--spark " + master + ": an executor needs at least "
                        + MIN_EXECUTOR_MB + " MB (Spark refuses a heap below 450 MB), was " + memory
                        + "; for example local-cluster[" + executors + "," + cores + ",1024]");
            }
            return new SparkMaster(String.format(Locale.ROOT, "local-cluster[%d,%d,%d]", executors, cores, memory),
                    executors * cores);
        }
        if (STANDALONE.matcher(master).matches()) {
            return new SparkMaster(master, 0);
        }
        String hint = master.startsWith("yarn") || master.startsWith("k8s://") || master.startsWith("mesos://")
                ? "; for YARN or Kubernetes submit ringstar.jar with spark-submit and give --spark without a master"
                : "";
        throw new IllegalArgumentException("--spark '" + text + "' is not a Spark master this command starts; give "
                + FORMS + hint);
    }

    private static int positive(String digits, String what, String master) {
        int value;
        try {
            value = Integer.parseInt(digits);
        } catch (NumberFormatException e) {
            value = 0;
        }
        if (value < 1) {
            throw new IllegalArgumentException("--spark " + master + ": " + what + " must be a positive integer, was "
                    + digits);
        }
        return value;
    }

    /** Whether the driver and every executor run on this machine, so everything is pinned to loopback. */
    public boolean onThisMachine() {
        return url.startsWith("local");
    }

    /** Whether executors are JVMs that Spark's launcher starts here ({@code local-cluster}). */
    public boolean startsExecutorJvms() {
        return url.startsWith("local-cluster");
    }

    /** Whether every task runs in the driver's JVM ({@code local} modes). */
    public boolean inDriverJvm() {
        return onThisMachine() && !startsExecutorJvms();
    }

    /** The memory of each executor of a {@code local-cluster} master, in MB. */
    public int executorMemoryMb() {
        Matcher cluster = LOCAL_CLUSTER.matcher(url);
        if (!cluster.matches()) {
            throw new IllegalStateException(url + " starts no executors of its own");
        }
        return Integer.parseInt(cluster.group(3));
    }
}
