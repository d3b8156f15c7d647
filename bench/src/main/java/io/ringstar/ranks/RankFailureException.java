package io.ringstar.ranks;

import java.util.ArrayList;
import java.util.List;

/**
 * A rank's task failed, or the ranks did not finish in time. The cause is the first failure's own
 * exception; {@link #failures()} lists every rank that failed, in the order they failed, since the
 * ones after the first usually failed because of it and the user needs to see which came first.
 */
public final class RankFailureException extends RuntimeException {
    private static final int NO_RANK = -1;

    private final int rank;
    private final List<RankFailure> failures;

    /** One rank's failure: its rank in the group's numbering of this process, and what it threw. */
    public record RankFailure(int rank, Throwable cause) {
    }

    RankFailureException(int rank, Throwable cause) {
        this(List.of(new RankFailure(rank, cause)));
    }

    /** @param failures every rank that failed, first first; not empty */
    RankFailureException(List<RankFailure> failures) {
        super("rank " + failures.get(0).rank() + " failed: " + failures.get(0).cause(), failures.get(0).cause());
        this.rank = failures.get(0).rank();
        this.failures = List.copyOf(failures);
    }

    RankFailureException(String message, Throwable cause) {
        super(message, cause);
        this.rank = NO_RANK;
        this.failures = cause instanceof RankFailureException first ? first.failures() : List.of();
    }

    /** The rank that failed first, or -1 if the failure is not one rank's (the ranks ran out of time). */
    public int rank() {
        return rank;
    }

    /** Every rank that failed, first first; empty when none failed but the ranks ran out of time. */
    public List<RankFailure> failures() {
        return new ArrayList<>(failures);
    }
}
