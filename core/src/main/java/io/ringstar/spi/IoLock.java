package io.ringstar.spi;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The I/O lock of one {@link PeerTransport}, and the ways its callers take it: briefly (spinning,
 * then yielding, before they queue), wholly (letting go of every hold for a moment and taking them
 * back). Owned by its transport's {@link ProgressEngine}, which decides who holds it when.
 *
 * <p>Holds a {@link ReentrantLock} rather than extending it, so that the engine sees only the ways
 * of taking it that this class offers; a call pays one more final field to reach the lock.
 */
final class IoLock {
    /** Attempts at the lock, spinning and then yielding, before a thread queues for it. */
    private static final int SPINS_FOR_LOCK = 256;
    private static final int YIELDS_FOR_LOCK = 16;

    private final ReentrantLock lock = new ReentrantLock();

    /** Takes the lock, queueing at once. */
    void lock() {
        lock.lock();
    }

    /** Takes the lock if it is free, never waiting. */
    boolean tryLock() {
        return lock.tryLock();
    }

    /** Takes the lock, waiting at most {@code time}. */
    boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return lock.tryLock(time, unit);
    }

    void unlock() {
        lock.unlock();
    }

    /** Whether another thread queues for the lock. */
    boolean hasQueuedThreads() {
        return lock.hasQueuedThreads();
    }

    boolean isHeldByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }

    boolean isLocked() {
        return lock.isLocked();
    }

    /** The calling thread's holds on the lock. */
    int getHoldCount() {
        return lock.getHoldCount();
    }

    /**
     * Takes the lock, trying for a while before it queues: holders keep it for microseconds, and
     * a queued thread costs a park, an unpark and an allocation.
     */
    void acquire() {
        if (!tryBriefly()) {
            lock();
        }
    }

    /**
     * Tries the lock for a short while without queueing: spinning (the holder runs on another
     * core), then yielding (it was preempted, as happens with more ranks than cores).
     */
    boolean tryBriefly() {
        for (int i = 0; i < SPINS_FOR_LOCK; i++) {
            if (tryLock()) {
                return true;
            }
            Thread.onSpinWait();
        }
        for (int i = 0; i < YIELDS_FOR_LOCK; i++) {
            Thread.yield();
            if (tryLock()) {
                return true;
            }
        }
        return false;
    }

    /** Releases every hold the calling thread has; returns how many to take back. */
    int releaseAll() {
        int holds = getHoldCount();
        for (int i = 0; i < holds; i++) {
            unlock();
        }
        return holds;
    }

    /** Takes the lock back {@code holds} times; unbounded, since this thread's own caller holds it again after. */
    void retake(int holds) {
        if (holds == 0) {
            return;
        }
        acquire();
        for (int i = 1; i < holds; i++) {
            lock();
        }
    }
}
