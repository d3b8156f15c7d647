package io.ringstar.internal.async;

import io.ringstar.AsyncSettings;
import io.ringstar.AsyncStatistics;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What one server holds, guarded by one lock: its range of the parameters, the optimizer state of
 * that range, its version (updates applied), each worker's clock (that worker's gradients
 * applied), the statistics and the first failure. Applies gradients, holds replies back as the
 * staleness bound says, and waits for every worker to finish; {@link ShardServer} moves the
 * messages. Workers are indexed {@code 0 … workers-1} here, ranks {@code servers + index}.
 */
final class ShardState {
    private final int rank;
    private final int servers;
    private final long total;
    private final long offset;
    private final int length;
    private final AsyncSettings settings;
    private final Duration timeout;
    private final String operation;
    private final ShardCheckpoints checkpoints;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private float[] parameters;
    private float[][] optimizerState;
    /** Each worker's clock and whether it finished. */
    private final WorkerClocks clocks;
    private long version;
    /** Counts updates, pulls and finishes: what a wait for the others may see move. */
    private long progress;
    private long maxLead;
    private long heldBack;
    private long maxGradientAge;
    private CollectiveException failure;

    /**
     * A worker's wait for the others to finish: the progress it last saw, when it gives up, and
     * when it was last sent WAITING.
     */
    static final class FinishWait {
        private long seen;
        private Deadline deadline;
        private long sentAt;
    }

    ShardState(int rank, int servers, int workers, long total, long offset, int length, AsyncSettings settings,
            Duration timeout, String operation, ShardCheckpoints checkpoints) {
        this.rank = rank;
        this.servers = servers;
        this.total = total;
        this.offset = offset;
        this.length = length;
        this.settings = settings;
        this.timeout = timeout;
        this.operation = operation;
        this.checkpoints = checkpoints;
        this.clocks = new WorkerClocks(workers);
    }

    /**
     * Starts from {@code initialRange}, or from the newest checkpoint when resuming.
     *
     * @throws IllegalStateException if already started
     * @throws IllegalArgumentException if the checkpoint is of another run
     */
    void start(float[] initialRange) {
        lock.lock();
        try {
            if (parameters != null) {
                throw new IllegalStateException(operation + " on rank " + rank + ": serve called twice");
            }
            float[] initial = initialRange.clone();
            float[][] state = new float[settings.optimizer().stateArrays()][length];
            if (checkpoints != null && settings.resume()) {
                var saved = checkpoints.load(length);
                if (saved.isPresent()) {
                    initial = saved.get().parameters();
                    state = saved.get().optimizerState();
                    version = saved.get().version();
                    clocks.restore(saved.get().clocks());
                }
            }
            optimizerState = state;
            parameters = initial;
        } finally {
            lock.unlock();
        }
    }

    /** The START message's header for {@code worker} (its clock) and payload (the range), as they are now. */
    ByteBuffer[] startMessage(int worker) {
        ByteBuffer header = AsyncMessages.allocate(AsyncMessages.HEADER_BYTES);
        ByteBuffer payload = AsyncMessages.allocate(4L * length);
        pack(header, payload, AsyncMessages.START, clock(worker));
        return new ByteBuffer[] {header, payload};
    }

    private long clock(int worker) {
        lock.lock();
        try {
            return clocks.of(worker);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Applies one gradient (unless this server applied that step of that worker before a resume),
     * holds the reply back while the staleness bound says so, then packs the reply.
     *
     * @return false if the training failed meanwhile
     * @throws CollectiveTimeoutException naming the slowest worker if the hold-back lasts past the timeout
     */
    boolean applyAndAwaitTurn(int worker, AsyncMessages.Header message, float[] gradient, ByteBuffer header,
            ByteBuffer payload) throws InterruptedException {
        int peer = servers + worker;
        lock.lock();
        try {
            if (message.step() > clocks.of(worker)) {
                throw new CollectiveMismatchException(operation, rank, peer, "worker rank " + peer + " pushed step "
                        + message.step() + ", but this server has applied " + clocks.of(worker) + " of its gradients");
            }
            if (message.step() < clocks.of(worker)) {
                // Applied before a resume, whose checkpoint of this server is newer than another's: answered, not
                // applied again, and not held back (the servers that still apply it hold the worker back).
                pack(header, payload, AsyncMessages.PARAMS, message.step());
                return true;
            }
            try {
                settings.optimizer().apply(parameters, gradient, optimizerState);
            } catch (RuntimeException e) {
                // This server's own failure, not the worker's: the ABORT names this server.
                return failHere("failed applying step " + message.step() + " of worker rank " + peer
                        + " with its optimizer " + settings.optimizer().describe() + ": " + e, e);
            }
            maxGradientAge = Math.max(maxGradientAge, version - message.version());
            version++;
            progress++;
            clocks.advance(worker);
            changed.signalAll();
            if (checkpoints != null && settings.checkpointEvery() > 0 && version % settings.checkpointEvery() == 0) {
                try {
                    checkpoints.save(version, parameters, optimizerState, clocks.all());
                } catch (RuntimeException e) {
                    return failHere(checkpointFailure(e), e);
                }
            }
            Deadline deadline = Deadline.after(timeout);
            boolean waited = false;
            while (failure == null && clocks.of(worker) - clocks.slowest() > settings.maxStaleness()) {
                waited = true;
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    int slowest = servers + clocks.slowestWorker();
                    throw new CollectiveTimeoutException(operation, rank, slowest, "worker rank " + peer + " is "
                            + (clocks.of(worker) - clocks.slowest()) + " updates ahead of worker rank " + slowest
                            + " (bound " + settings.maxStaleness() + "), which pushed nothing for " + timeout);
                }
                changed.awaitNanos(left);
            }
            if (failure != null) {
                return false;
            }
            if (waited) {
                heldBack++;
            }
            maxLead = Math.max(maxLead, clocks.of(worker) - clocks.slowest());
            pack(header, payload, AsyncMessages.PARAMS, message.step());
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Marks the worker finished after {@code message.step()} steps and returns its wait for the others.
     *
     * @throws CollectiveMismatchException if this server applied another number of its gradients
     */
    FinishWait finish(int worker, AsyncMessages.Header message) {
        int peer = servers + worker;
        lock.lock();
        try {
            if (message.step() != clocks.of(worker)) {
                throw new CollectiveMismatchException(operation, rank, peer, "worker rank " + peer + " finished after "
                        + message.step() + " steps; this server applied " + clocks.of(worker) + " of its gradients");
            }
            clocks.finish(worker);
            progress++;
            changed.signalAll();
            FinishWait wait = new FinishWait();
            wait.seen = progress;
            wait.deadline = Deadline.after(timeout);
            wait.sentAt = System.nanoTime() - waitingSpacing();
            return wait;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits a quarter of the timeout at most for every worker to finish, then says what to send the
     * finished {@code worker}: {@link AsyncMessages#FINAL} (packed), {@link AsyncMessages#WAITING}
     * (header packed) as soon as others moved (pushed, pulled or finished), though at most once an
     * eighth of the timeout, {@link AsyncMessages#ABORT} after a failure, or 0 for nothing yet.
     *
     * @throws CollectiveTimeoutException naming the slowest worker after a timeout in which nothing moved
     */
    byte awaitOthers(int worker, FinishWait wait, ByteBuffer header, ByteBuffer payload) throws InterruptedException {
        lock.lock();
        try {
            long until = System.nanoTime() + Math.max(1, Deadline.saturatedNanos(timeout) / 4);
            while (failure == null && !clocks.allDone()) {
                // An update wakes this wait at once, so WAITING reaches the worker well inside its own wait for
                // FINAL (twice the timeout) however the others' pushes fall; the spacing keeps fast trainers
                // from flooding the finished worker with one WAITING per update.
                long wake = progress != wait.seen ? wait.sentAt + waitingSpacing() : until;
                long left = wake - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                changed.awaitNanos(left);
            }
            if (failure != null) {
                return AsyncMessages.ABORT;
            }
            if (clocks.allDone()) {
                pack(header, payload, AsyncMessages.FINAL, clocks.of(worker));
                return AsyncMessages.FINAL;
            }
            if (progress != wait.seen) {
                // Others still train: the worker is told, and its wait for FINAL starts afresh.
                wait.seen = progress;
                wait.deadline = Deadline.after(timeout);
                wait.sentAt = System.nanoTime();
                AsyncMessages.Header.of(AsyncMessages.WAITING, servers, version, clocks.of(worker), total, offset, 0)
                        .writeTo(header);
                return AsyncMessages.WAITING;
            }
            if (wait.deadline.passed()) {
                int slowest = servers + clocks.slowestWorker();
                throw new CollectiveTimeoutException(operation, rank, slowest, "worker rank " + slowest
                        + " neither pushed, pulled nor finished for " + timeout + " while worker rank "
                        + (servers + worker) + " waited for every worker to finish");
            }
            return 0;
        } finally {
            lock.unlock();
        }
    }

    /** Writes a reply's header and this server's range into the buffers, flipped. */
    void pack(ByteBuffer header, ByteBuffer payload, byte kind, long step) {
        lock.lock();
        try {
            new AsyncMessages.Header(kind, servers, version, step, total, offset, 4 * length, -1, maxLead, heldBack,
                    maxGradientAge).writeTo(header);
            payload.clear();
            payload.asFloatBuffer().put(parameters);
            payload.limit(4 * length);
        } finally {
            lock.unlock();
        }
    }

    /**
     * After every worker thread ended: throws the first failure, else checkpoints (if asked to).
     *
     * @throws CollectiveException naming no peer if the checkpoint cannot be written
     */
    AsyncStatistics end() {
        lock.lock();
        try {
            if (failure != null) {
                throw failure;
            }
            if (checkpoints != null) {
                try {
                    checkpoints.save(version, parameters, optimizerState, clocks.all());
                } catch (RuntimeException e) {
                    failHere(checkpointFailure(e), e);
                    throw failure;
                }
            }
            return statistics();
        } finally {
            lock.unlock();
        }
    }

    AsyncStatistics statistics() {
        lock.lock();
        try {
            return new AsyncStatistics(version, maxLead, heldBack, maxGradientAge);
        } finally {
            lock.unlock();
        }
    }

    long progress() {
        lock.lock();
        try {
            return progress;
        } finally {
            lock.unlock();
        }
    }

    /** The first failure, or null. */
    CollectiveException failure() {
        lock.lock();
        try {
            return failure;
        } finally {
            lock.unlock();
        }
    }

    /** Counts a PULL as progress: the worker is alive, and a wait for the others may see it. */
    void pulled() {
        lock.lock();
        try {
            progress++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** How often at most a finished worker is sent WAITING: an eighth of the timeout. */
    private long waitingSpacing() {
        return Math.max(1, Deadline.saturatedNanos(timeout) / 8);
    }

    private String checkpointFailure(RuntimeException e) {
        return "could not checkpoint to " + checkpoints.directory() + ": " + e.getMessage();
    }

    /**
     * Records a failure of this server itself (its optimizer, its disk), naming no peer so that the
     * ABORTs name this server rather than the worker whose message was being served. Lock held.
     *
     * @return false, for {@link #applyAndAwaitTurn} to return
     */
    private boolean failHere(String detail, RuntimeException e) {
        fail(new CollectiveException(operation, rank, CollectiveException.NO_RANK, "server rank " + rank + " "
                + detail, e));
        return false;
    }

    /** Records the first failure and wakes every thread, which then tells its worker. */
    void fail(CollectiveException e) {
        lock.lock();
        try {
            if (failure == null) {
                failure = e;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
