package io.ringstar.cli.launch;

/** A rank's task failed, or the ranks did not finish in time; the cause is the rank's own exception. */
public final class RankFailureException extends RuntimeException {
    private static final int NO_RANK = -1;

    private final int rank;

    RankFailureException(int rank, Throwable cause) {
        super("rank " + rank + " failed: " + cause, cause);
        this.rank = rank;
    }

    RankFailureException(String message, Throwable cause) {
        super(message, cause);
        this.rank = NO_RANK;
    }

    /** The rank that failed first, or -1 if the failure is not one rank's. */
    public int rank() {
        return rank;
    }
}
