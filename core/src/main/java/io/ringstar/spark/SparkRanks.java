package io.ringstar.spark;

import io.ringstar.InvalidConfigException;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.resource.ResourceProfile;
import scala.reflect.ClassTag;

/**
 * Runs ringstar ranks as one Spark barrier stage: partition {@code r} of an RDD is rank {@code r},
 * the world size is its number of partitions, and Spark starts every task of the stage together or
 * none, which a collective job needs.
 *
 * <p>Each task gets a {@link io.ringstar.DistributedConfig} with its rank and the world size; the
 * coordinator on rank 0's executor, which binds its endpoint first and publishes the address it
 * bound through the barrier context (no port is probed and bound later); a job id made once per job
 * on the driver, so that two jobs on one host never collide; for the network transports a secret
 * made once per job on the driver when the options give none, so every job is authenticated with
 * no set-up (the secret travels to the executors inside the task, which Spark's
 * {@code spark.authenticate} and {@code spark.network.crypto.enabled} protect in transit); the
 * transport {@code netty} unless the options name another; and the options.
 *
 * <p><b>Options.</b> The names {@code --option name=value} takes ({@link io.ringstar.Transports#options}),
 * plus {@code transport} and {@code timeout} (seconds, or a duration with a unit: {@code 90s},
 * {@code 5m}), which set the configuration's fields. An unknown option, a malformed value or a
 * transport missing from the class path (the message names the artifact to add) is refused on the
 * driver before the stage starts.
 *
 * <p><b>Refused at once</b>, with what to change: dynamic allocation
 * ({@code spark.dynamicAllocation.enabled}), an RDD of no partitions, and more partitions than the
 * cluster has task slots (on a cluster that is still starting, once its executors had
 * {@value #SLOT_WAIT_SECONDS} s to register; Spark itself would retry for 40 × 15 s).
 *
 * <p><b>Failures.</b> A rank that throws fails the job at once: the transports it opened are closed
 * as its task ends, so its peers fail within seconds with a peer failure, not their timeout; the
 * job asks Spark to interrupt the tasks it kills, and it is cancelled rather than retried, since
 * the rank would throw again. The driver's {@link SparkRankException} names the rank and carries
 * its exception as the cause. A lost executor (its process killed, its host gone) instead makes
 * Spark retry the whole stage, up to {@code spark.stage.maxConsecutiveAttempts} (4 by default)
 * times: the stage feeds a shuffle (into the one partition the driver collects), which is what
 * lets Spark retry a barrier stage at all. A retried task runs again from the start of its
 * partition; it reads {@link #stageAttempt()} to resume from its checkpoint instead.
 *
 * <p>The job runs under the job tag {@code ringstar-<job id>}, through which a rank's failure
 * cancels it; the caller's job group (and cancelling it) is left alone, and the job description
 * is set for the call and restored after it.
 *
 * <p>Blocks until every rank has returned, or the job failed. Every wait inside a rank is bounded by
 * the timeout; Spark's own waits are Spark's: the ranks first meet at the barrier context's
 * {@code allGather}, bounded by {@code spark.barrier.sync.timeout} (Spark's default is a year: set
 * it on a cluster where a task may hang before it starts), and a failed task ends the stage at once.
 */
public final class SparkRanks {
    /** On a cluster that is not local, how long the driver waits for executors to offer enough task slots. */
    static final int SLOT_WAIT_SECONDS = 60;
    private static final String INTERRUPT_ON_CANCEL = "spark.job.interruptOnCancel";
    private static final String JOB_DESCRIPTION = "spark.job.description";

    private SparkRanks() {
    }

    /** {@link #run(JavaRDD, Map, RankTask)} with no options: Netty, the default timeout. */
    public static <T, R extends Serializable> List<R> run(JavaRDD<T> data, RankTask<T, R> task) {
        return run(data, Map.of(), task);
    }

    /**
     * Runs {@code task} once per partition of {@code data}, as rank {@code partition} of a group of
     * {@code data.getNumPartitions()} ranks, all in one barrier stage.
     *
     * @param options {@code transport}, {@code timeout} and transport or core options, by name
     * @return the tasks' results, in rank order
     * @throws InvalidConfigException before anything starts, if an option or the cluster is not fit
     *     for the job (see the class comment)
     * @throws SparkRankException if the stage failed: the failed rank and its exception
     */
    public static <T, R extends Serializable> List<R> run(JavaRDD<T> data, Map<String, String> options,
            RankTask<T, R> task) {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(task, "task");
        SparkContext spark = data.context();
        int ranks = data.getNumPartitions();
        if (ranks == 0) {
            throw new InvalidConfigException("data", "an RDD with no partitions", "each partition is a rank:"
                    + " give it at least one");
        }
        // The options first: a misspelt one is refused at once, not after waiting for task slots.
        JobSettings job = JobSettings.of(ranks, spark.applicationId(), options);
        requireRunnable(spark, ranks);
        ClassTag<RankStage.Output<R>> tag = ClassTag.apply(RankStage.Output.class);
        // The barrier stage feeds a shuffle (into one partition the driver collects), since Spark retries
        // a failed barrier shuffle-map stage as a whole but aborts a failed barrier result stage.
        RDD<RankStage.Output<R>> stage = data.rdd().barrier().mapPartitions(new RankStage<>(job, task), false, tag);
        JavaRDD<RankStage.Output<R>> gathered = JavaRDD.fromRDD(stage, tag).coalesce(1, true);
        String[] properties = {TaskFailures.JOB_PROPERTY, INTERRUPT_ON_CANCEL, JOB_DESCRIPTION};
        String[] saved = new String[properties.length];
        for (int i = 0; i < properties.length; i++) {
            saved[i] = spark.getLocalProperty(properties[i]);
        }
        spark.setLocalProperty(TaskFailures.JOB_PROPERTY, job.jobId());
        // Spark kills the rest of a failed barrier stage; interrupted, their waits end now, not at the timeout.
        spark.setLocalProperty(INTERRUPT_ON_CANCEL, "true");
        spark.setLocalProperty(JOB_DESCRIPTION, "ringstar: " + ranks + " ranks over " + job.transport()
                + " (job " + job.jobId() + ")");
        // A job tag, not a job group: the caller's own group (and its cancelling) stays theirs.
        String jobTag = "ringstar-" + job.jobId().replace(',', '-');
        TaskFailures failures = new TaskFailures(job.jobId(), () -> spark.cancelJobsWithTag(jobTag));
        spark.addSparkListener(failures);
        spark.addJobTag(jobTag);
        try {
            List<RankStage.Output<R>> outputs = gathered.collect();
            List<R> results = new ArrayList<>(Collections.nCopies(ranks, null));
            for (RankStage.Output<R> output : outputs) {
                results.set(output.rank(), output.value());
            }
            return Collections.unmodifiableList(results);
        } catch (Exception stageFailure) {
            throw failures.explain(stageFailure, ranks);
        } finally {
            spark.removeJobTag(jobTag);
            spark.removeSparkListener(failures);
            for (int i = 0; i < properties.length; i++) {
                spark.setLocalProperty(properties[i], saved[i]);
            }
        }
    }

    /**
     * The attempt number of the stage that runs the calling task: 0 on the first run, higher when
     * Spark retries the stage as a whole (a barrier stage that feeds a shuffle), so that a task can
     * resume from its checkpoint. Call it from the task's own thread.
     *
     * @throws IllegalStateException outside a Spark task's thread
     */
    public static int stageAttempt() {
        TaskContext context = TaskContext.get();
        if (context == null) {
            throw new IllegalStateException("SparkRanks.stageAttempt() is only known on a Spark task's own thread");
        }
        return context.stageAttemptNumber();
    }

    /** Refuses what Spark would hang on or reject late: see the class comment. */
    private static void requireRunnable(SparkContext spark, int ranks) {
        if (spark.getConf().getBoolean("spark.dynamicAllocation.enabled", false)) {
            throw new InvalidConfigException("spark.dynamicAllocation.enabled", "true", "a barrier stage needs every"
                    + " rank's task at once, which dynamic allocation does not promise: set"
                    + " spark.dynamicAllocation.enabled=false for this application");
        }
        int slots;
        try {
            // Spark's own count (internal to Spark, public in its bytecode), as its barrier check uses.
            ResourceProfile profile = spark.resourceProfileManager().defaultResourceProfile();
            long deadline = System.nanoTime() + (spark.isLocal() ? 0 : Duration.ofSeconds(SLOT_WAIT_SECONDS).toNanos());
            slots = spark.maxNumConcurrentTasks(profile);
            while (slots < ranks && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                slots = spark.maxNumConcurrentTasks(profile);
            }
        } catch (LinkageError otherSpark) {
            // A Spark whose internals differ: its own barrier check (which retries, then fails) applies.
            return;
        }
        if (slots < ranks) {
            throw new InvalidConfigException("data", ranks + " partitions", "a barrier stage runs every partition's"
                    + " task at once, and this cluster (" + spark.master() + ") has " + slots + " task slots"
                    + " (executors × cores ÷ spark.task.cpus): give the RDD at most " + slots
                    + " partitions (data.repartition(" + slots + ") or coalesce) or add executors or cores");
        }
    }
}
