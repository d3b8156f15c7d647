package io.ringstar.dl4j;

import io.ringstar.CollectiveException;
import io.ringstar.internal.algorithm.Failures;

/**
 * Restates a failure of a collective in the terms of the training loop: the step and epoch it
 * happened at, and what the ranks must keep equal. The new exception has the failure's type
 * ({@link Failures#sameKind}), its rank and peer, and the failure as its cause.
 */
final class StepFailures {
    private StepFailures() {
    }

    /**
     * @param operation the training loop's name for where it failed, for example {@code "DataParallel step 17
     *     (epoch 0)"}
     * @param rank this rank, used when {@code failure} names none
     * @param advice what to keep equal across ranks, appended to the failure's message
     */
    static CollectiveException restate(CollectiveException failure, String operation, int rank, String advice) {
        int reportingRank = failure.rank() != CollectiveException.NO_RANK ? failure.rank() : rank;
        int peer = failure.peerRank();
        // The failure's own rank and peer are this exception's: its operation and detail follow them.
        String detail = failure.operation() + ": " + failure.detail() + (advice.isEmpty() ? "" : "; " + advice);
        return Failures.sameKind(failure, operation, reportingRank, peer, detail);
    }
}
