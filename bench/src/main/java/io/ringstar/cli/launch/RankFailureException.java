package io.ringstar.cli.launch;

import java.io.PrintStream;

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

    /**
     * Tells the user: flushes {@code out} (so the ranks' lines come first), prints
     * "{@code <program>: <message>}" and the cause's stack trace to {@code err}.
     *
     * @return the exit status of a command whose rank failed, 1
     */
    public int report(String program, PrintStream out, PrintStream err) {
        out.flush();
        err.println(program + ": " + getMessage());
        if (getCause() != null) {
            getCause().printStackTrace(err);
        }
        return 1;
    }

    /** The rank that failed first, or -1 if the failure is not one rank's. */
    public int rank() {
        return rank;
    }
}
