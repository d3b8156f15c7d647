package io.ringstar.spark;

/**
 * A {@link SparkRanks} job failed. When a rank's task threw, its exception is the cause (as Spark
 * carried it back; when Spark could not, a {@link RemoteRankException} with its class, message and
 * stack trace) and {@link #rank()} names it; Spark's own exception is attached as suppressed.
 */
public class SparkRankException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** {@link #rank()} when no rank's failure is known (the stage failed for another reason). */
    public static final int NO_RANK = -1;

    private final int rank;

    /** A failure of {@code rank} ({@link #NO_RANK} if unknown), with {@code cause}. */
    public SparkRankException(String message, int rank, Throwable cause) {
        super(message, cause);
        this.rank = rank;
    }

    /** The rank whose failure failed the job, or {@link #NO_RANK}. */
    public int rank() {
        return rank;
    }
}
