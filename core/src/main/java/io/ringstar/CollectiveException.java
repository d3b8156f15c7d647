package io.ringstar;

/**
 * Base of every failure that ringstar reports. Unchecked, because a failed collective cannot be
 * handled locally: the group is broken and the caller can only stop or restart the job.
 *
 * <p>The message always names the operation, this rank and, where one is involved, the peer rank,
 * in the form {@code "<operation> on rank <r> (peer rank <p>): <detail>"}.
 */
public class CollectiveException extends RuntimeException {
    /** Value of {@link #peerRank()} and {@link #rank()} when no rank is involved or known. */
    public static final int NO_RANK = -1;

    private final String operation;
    private final int rank;
    private final int peerRank;
    private final String detail;

    /**
     * @param operation what was being done, for example {@code "reduceGradients"} or {@code "recv"}
     * @param rank the rank that reports the failure, or {@link #NO_RANK}
     * @param peerRank the rank that the failure concerns, or {@link #NO_RANK}
     * @param detail what went wrong, with the values that disagreed
     */
    public CollectiveException(String operation, int rank, int peerRank, String detail) {
        this(operation, rank, peerRank, detail, null);
    }

    public CollectiveException(String operation, int rank, int peerRank, String detail, Throwable cause) {
        super(describe(operation, rank, peerRank, detail), cause);
        this.operation = operation;
        this.rank = rank;
        this.peerRank = peerRank;
        this.detail = detail;
    }

    /** The operation that failed, for example {@code "reduceGradients"}. */
    public String operation() {
        return operation;
    }

    /** The rank that reported this failure, or {@link #NO_RANK}. */
    public int rank() {
        return rank;
    }

    /** The peer rank that this failure concerns, or {@link #NO_RANK}. */
    public int peerRank() {
        return peerRank;
    }

    /** The message without the operation and ranks in front. */
    public String detail() {
        return detail;
    }

    private static String describe(String operation, int rank, int peerRank, String detail) {
        StringBuilder text = new StringBuilder(operation);
        if (rank != NO_RANK) {
            text.append(" on rank ").append(rank);
        }
        if (peerRank != NO_RANK) {
            text.append(" (peer rank ").append(peerRank).append(')');
        }
        return text.append(": ").append(detail).toString();
    }
}
