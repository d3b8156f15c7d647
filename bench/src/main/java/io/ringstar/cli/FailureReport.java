package io.ringstar.cli;

import io.ringstar.CollectiveException;
import io.ringstar.ranks.RankFailureException;
import java.io.PrintStream;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * How every command tells the user that its run failed: one line per rank that failed, in the
 * order they failed, each naming the rank, the operation and the cause's message. The stack traces
 * go to the {@code java.util.logging} log at {@code FINE} (logger {@code io.ringstar.cli}), or with
 * {@value CommandDefaults#VERBOSE} to the terminal after the lines: the first failure is usually
 * the cause and the others its consequences, which a wall of traces would hide.
 */
final class FailureReport {
    private static final Logger LOG = Logger.getLogger(FailureReport.class.getPackageName());

    private FailureReport() {
    }

    /**
     * Reports the ranks' failure of {@code command} ({@code "ringstar bench"}): flushes {@code out}
     * first, so the ranks' own lines come before it.
     *
     * @return the exit status of a failed run, 1
     */
    static int ranksFailed(String command, RankFailureException failure, boolean verbose, PrintStream out,
            PrintStream err) {
        out.flush();
        if (failure.rank() < 0) {
            // The ranks ran out of time; the message names them and any failure before that.
            err.println(command + ": " + failure.getMessage());
        }
        for (RankFailureException.RankFailure rank : failure.failures()) {
            String line = command + ": rank " + rank.rank() + " failed" + describe(rank.cause());
            err.println(line);
            trace(line, rank.cause(), verbose, err);
        }
        if (failure.failures().isEmpty() && failure.getCause() != null) {
            trace(failure.getMessage(), failure.getCause(), verbose, err);
        }
        return 1;
    }

    /** Reports a failure that is no rank's (a file that cannot be written, a bug): one line, the trace as above. */
    static int failed(String command, Exception failure, boolean verbose, PrintStream err) {
        String line = command + " failed" + describe(failure);
        err.println(line);
        trace(line, failure, verbose, err);
        return 1;
    }

    /**
     * {@code " in reduceGradients (peer rank 2): <detail>"} for a collective's failure, else
     * {@code ": <exception's simple name>: <message>"}.
     */
    static String describe(Throwable cause) {
        if (cause instanceof CollectiveException collective) {
            String peer = collective.peerRank() == CollectiveException.NO_RANK ? ""
                    : " (peer rank " + collective.peerRank() + ")";
            return " in " + collective.operation() + peer + ": " + collective.detail();
        }
        String message = cause.getMessage();
        return ": " + cause.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    private static void trace(String line, Throwable cause, boolean verbose, PrintStream err) {
        if (verbose) {
            cause.printStackTrace(err);
        } else {
            LOG.log(Level.FINE, line, cause);
        }
    }
}
