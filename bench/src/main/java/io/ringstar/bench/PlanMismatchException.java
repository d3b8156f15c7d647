package io.ringstar.bench;

/**
 * The ranks of one group were given different sweeps (say, other {@code --iters}): found by
 * {@link PlanAgreement} on every rank before the first row, and the user's to fix, so the command
 * line reports it as a usage error. The message names the ranks and, on a rank that differs, its
 * flags against rank 0's.
 */
public final class PlanMismatchException extends RuntimeException {
    /** @param message which ranks differ and how */
    public PlanMismatchException(String message) {
        super(message);
    }
}
