package io.ringstar.internal.engine;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveHandle;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Runs a communicator's collectives in the order they are issued, on the caller's thread when
 * nothing is queued (a blocking call with no non-blocking one in flight pays no hand-off) and on
 * one background thread otherwise. A blocking call issued while non-blocking ones are in flight
 * joins the queue and waits for its turn, so every rank runs its collectives in issue order.
 *
 * <p>The background thread is started at the first non-blocking call; it is a daemon, named after
 * the rank. Calls are issued from one thread at a time.
 */
public final class CollectiveQueue {
    /** How long {@link Pending#await} waits past the deadline for the collective's own exception. */
    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final int rank;
    /** Collectives issued to the background thread and not yet finished. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private ExecutorService worker;
    /** Set by {@link #close}; read by the background thread to tell a collective cut short by it. */
    private volatile boolean closed;

    public CollectiveQueue(int rank) {
        this.rank = rank;
    }

    /** Whether a collective issued now may run on the caller's thread: nothing is in flight. */
    public boolean idle() {
        return inFlight.get() == 0;
    }

    /**
     * Queues {@code body} behind every collective in flight and returns its handle at once.
     *
     * @param operation names the collective in the exceptions of its handle
     * @param deadline bounds every wait of the collective and of its handle
     */
    public <T> Pending<T> submit(String operation, Deadline deadline, Supplier<T> body) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank + ": the communicator is closed");
        }
        if (worker == null) {
            worker = Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, "ringstar-collectives-rank-" + rank);
                thread.setDaemon(true);
                return thread;
            });
        }
        Pending<T> pending = new Pending<>(operation, rank, deadline);
        inFlight.incrementAndGet();
        try {
            worker.execute(() -> {
                try {
                    pending.future.complete(body.get());
                } catch (Throwable e) {
                    pending.future.completeExceptionally(closed ? new IllegalStateException(operation + " on rank "
                            + rank + ": the communicator was closed before the collective completed", e) : e);
                } finally {
                    inFlight.decrementAndGet();
                }
            });
        } catch (RejectedExecutionException e) {
            inFlight.decrementAndGet();
            throw new IllegalStateException(operation + " on rank " + rank + ": the communicator is closed", e);
        }
        return pending;
    }

    /** Stops taking collectives; those in flight that fail from now on report the close. */
    public void markClosed() {
        closed = true;
    }

    /**
     * Stops taking collectives and waits up to {@code limit} for those in flight to end (the
     * caller has made them fail fast by closing the transport).
     *
     * @return whether every collective in flight ended in time
     */
    public boolean close(Deadline limit) {
        closed = true;
        if (worker == null) {
            return true;
        }
        worker.shutdown();
        try {
            return worker.awaitTermination(Math.max(0, limit.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The handle of one queued collective, with its result. */
    public static final class Pending<T> implements CollectiveHandle {
        private final String operation;
        private final int rank;
        private final Deadline deadline;
        final CompletableFuture<T> future = new CompletableFuture<>();

        Pending(String operation, int rank, Deadline deadline) {
            this.operation = operation;
            this.rank = rank;
            this.deadline = deadline;
        }

        @Override
        public boolean isDone() {
            return future.isDone();
        }

        @Override
        public void await() {
            result();
        }

        /** Waits as {@link #await()} does and returns the collective's result. */
        public T result() {
            try {
                return future.get(Math.max(0, deadline.remainingNanos()) + GRACE_NANOS, TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException) {
                    throw (RuntimeException) cause;
                }
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw new CollectiveException(operation, rank, CollectiveException.NO_RANK, "failed: " + cause, cause);
            } catch (TimeoutException e) {
                throw new CollectiveTimeoutException(operation, rank, CollectiveException.NO_RANK,
                        "not complete within its timeout of " + deadline.timeout() + " from when it was issued");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException(operation, rank, CollectiveException.NO_RANK,
                        "interrupted while waiting for the collective", e);
            }
        }

        @Override
        public CompletableFuture<Void> toCompletableFuture() {
            return future.thenApply(result -> (Void) null);
        }
    }
}
