package io.ringstar.spark;

import io.ringstar.PeerFailureException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.TaskKilled;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * Listens, on the driver, for the failed tasks of one {@link SparkRanks} job, so that the job's
 * exception names the rank that failed and carries its exception, and so that a rank's own
 * failure cancels the job instead of letting Spark retry the stage (which it does for a lost
 * executor). Spark alone names no cause: a failed barrier stage reaches the driver as a
 * {@code SparkException} naming whichever task Spark saw fail first, often a peer of the rank that
 * threw.
 */
final class TaskFailures extends SparkListener {
    /** The local property that marks the job's stages. */
    static final String JOB_PROPERTY = "io.ringstar.spark.job";
    /** Spark delivers listener events on its own thread: how long the driver waits for the first failure's. */
    private static final Duration EVENT_WAIT = Duration.ofSeconds(5);

    private final String jobId;
    /** Cancels the job: a rank that threw would throw again, so Spark must not retry the stage. */
    private final Runnable cancel;
    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final Set<Integer> stages = ConcurrentHashMap.newKeySet();
    /** In the order Spark reported them. Guarded by itself. */
    private final List<Failure> failures = new ArrayList<>();
    /** Guarded by {@link #failures}: by stage and attempt ("stage:attempt"), the tasks that ended, however. */
    private final Map<String, Integer> ended = new HashMap<>();

    TaskFailures(String jobId, Runnable cancel) {
        this.jobId = jobId;
        this.cancel = cancel;
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
        if (submitted.properties() != null && jobId.equals(submitted.properties().getProperty(JOB_PROPERTY))) {
            stages.add(submitted.stageInfo().stageId());
        }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd taskEnd) {
        if (!stages.contains(taskEnd.stageId())) {
            return;
        }
        Failure failure = taskEnd.reason() instanceof TaskFailedReason reason
                ? new Failure(taskEnd.taskInfo().index(), taskEnd.stageId(), taskEnd.stageAttemptId(), reason) : null;
        synchronized (failures) {
            ended.merge(taskEnd.stageId() + ":" + taskEnd.stageAttemptId(), 1, Integer::sum);
            if (failure != null) {
                failures.add(failure);
            }
            failures.notifyAll();
        }
        if (failure != null && failure.isOwn() && cancelled.compareAndSet(false, true)) {
            cancel.run();
        }
    }

    /**
     * The job's exception for Spark's {@code stageFailure}: the rank whose own exception (not a peer
     * failure it caused, nor Spark killing the rest of the stage) failed the job, with that exception
     * as the cause and Spark's attached as suppressed.
     */
    SparkRankException explain(Exception stageFailure, int worldSize) {
        Failure root;
        synchronized (failures) {
            // The first failure Spark reports is often a peer of the rank that threw: wait (bounded) for
            // a rank's own failure, or for every task to have ended.
            long deadline = System.nanoTime() + EVENT_WAIT.toNanos();
            long left;
            while (failures.stream().noneMatch(Failure::isOwn) && !allEnded(worldSize)
                    && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(failures, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            root = failures.stream().filter(Failure::isOwn).findFirst()
                    .orElse(failures.stream().filter(failure -> failure.reason instanceof ExceptionFailure).findFirst()
                            .orElse(failures.stream().findFirst().orElse(null)));
        }
        SparkRankException failure;
        if (root == null) {
            failure = new SparkRankException("the Spark stage of ringstar job " + jobId + " (" + worldSize
                    + " ranks) failed: " + stageFailure.getMessage(), SparkRankException.NO_RANK, stageFailure);
        } else {
            Throwable cause = root.cause();
            failure = new SparkRankException("rank " + root.rank + " of " + worldSize + " failed in ringstar job "
                    + jobId + (root.stageAttempt > 0 ? " (stage attempt " + root.stageAttempt + ")" : "") + ": "
                    + (cause == null ? root.reason.toErrorString() : cause), root.rank, cause);
            failure.addSuppressed(stageFailure);
        }
        return failure;
    }

    /** Whether every task of the attempt that failed last has ended (a barrier stage has worldSize tasks). */
    private boolean allEnded(int worldSize) {
        if (failures.isEmpty()) {
            return false;
        }
        Failure last = failures.get(failures.size() - 1);
        return ended.getOrDefault(last.stage + ":" + last.stageAttempt, 0) >= worldSize;
    }

    /** One failed task of the job: its rank, its stage and the stage's attempt, and Spark's reason. */
    private record Failure(int rank, int stage, int stageAttempt, TaskFailedReason reason) {

        /** The rank's exception, as Spark carried it back or as the executor described it; null if none. */
        Throwable cause() {
            if (!(reason instanceof ExceptionFailure failed)) {
                return null;
            }
            Throwable thrown = failed.exception().isDefined() ? failed.exception().get() : null;
            if (thrown instanceof RankStage.RankTaskFailure && thrown.getCause() != null) {
                return thrown.getCause();
            }
            return thrown != null ? thrown
                    : new RemoteRankException(failed.className(), failed.description(), failed.stackTrace());
        }

        /**
         * The rank failed of itself: not Spark killing it, nor a peer's failure reaching it (a
         * {@link PeerFailureException} or an interruption anywhere in its cause chain), so that Spark's
         * retry of the stage (after a lost executor) is not cancelled for a consequence of the loss.
         */
        boolean isOwn() {
            if (reason instanceof TaskKilled || !(reason instanceof ExceptionFailure failed)) {
                return false;
            }
            if (failed.exception().isDefined()) {
                for (Throwable t = failed.exception().get(); t != null; t = t.getCause() == t ? null : t.getCause()) {
                    if (t instanceof PeerFailureException || t instanceof InterruptedException) {
                        return false;
                    }
                }
                return true;
            }
            // Spark could not send the exception itself: judge by what the executor wrote of it.
            String text = failed.className() + " " + failed.description() + " " + failed.fullStackTrace();
            return !text.contains(PeerFailureException.class.getName())
                    && !text.contains("org.apache.spark.TaskKilledException")
                    && !text.contains(InterruptedException.class.getName());
        }
    }
}
