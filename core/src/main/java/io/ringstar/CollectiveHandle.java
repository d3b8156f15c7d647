package io.ringstar;

import java.util.concurrent.CompletableFuture;

/**
 * A collective started by a non-blocking call of {@link Communicator} ({@code allReduceAsync},
 * {@code broadcastAsync}). The tensors passed to that call belong to the collective until it is
 * done: do not read or write them before {@link #isDone()} is true or {@link #await()} returned.
 * Handles are thread-safe.
 */
public interface CollectiveHandle {
    /** Whether the collective has completed, normally or with a failure. Never blocks. */
    boolean isDone();

    /**
     * Waits until the collective is complete on this rank. Never waits past the deadline the
     * collective got when it was issued (the configured timeout from then), however many
     * collectives were queued before it.
     *
     * @throws CollectiveException the collective's failure (a {@link PeerFailureException} naming
     *     the rank that died, a {@link CollectiveMismatchException}, ...), or a
     *     {@link CollectiveTimeoutException} if it did not complete by its deadline
     * @throws IllegalStateException if the communicator was closed before the collective completed
     */
    void await();

    /**
     * A future completed when the collective is, normally or exceptionally with what {@link #await()}
     * would throw; completing or cancelling it does not affect the collective.
     */
    CompletableFuture<Void> toCompletableFuture();
}
