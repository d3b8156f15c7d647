package io.ringstar.internal.async;

/**
 * Each worker's clock on one server (how many of its gradients the server applied) and whether
 * it finished: what the staleness bound and the wait for the others read. Workers are indexed
 * {@code 0 … workers-1}. Not thread-safe: {@link ShardState} reads and writes it under its lock.
 */
final class WorkerClocks {
    private final long[] clock;
    private final boolean[] done;

    WorkerClocks(int workers) {
        this.clock = new long[workers];
        this.done = new boolean[workers];
    }

    /** Sets every clock from a checkpoint's, {@code saved[w]} for worker {@code w}. */
    void restore(long[] saved) {
        System.arraycopy(saved, 0, clock, 0, clock.length);
    }

    /** The clocks themselves, not a copy: for a checkpoint written while the caller holds the lock. */
    long[] all() {
        return clock;
    }

    /** The gradients of {@code worker} applied so far. */
    long of(int worker) {
        return clock[worker];
    }

    /** Counts one more gradient of {@code worker} applied. */
    void advance(int worker) {
        clock[worker]++;
    }

    /** Marks {@code worker} finished: it no longer holds the others back. */
    void finish(int worker) {
        done[worker] = true;
    }

    /** Whether every worker finished. */
    boolean allDone() {
        for (boolean finished : done) {
            if (!finished) {
                return false;
            }
        }
        return true;
    }

    /** Lowest clock among the workers still training; 0 if none is. */
    long slowest() {
        long lowest = Long.MAX_VALUE;
        for (int w = 0; w < clock.length; w++) {
            if (!done[w]) {
                lowest = Math.min(lowest, clock[w]);
            }
        }
        return lowest == Long.MAX_VALUE ? 0 : lowest;
    }

    /** The unfinished worker with the lowest clock (the first such); 0 if every worker finished. */
    int slowestWorker() {
        int slowest = -1;
        for (int w = 0; w < clock.length; w++) {
            if (!done[w] && (slowest < 0 || clock[w] < clock[slowest])) {
                slowest = w;
            }
        }
        return Math.max(slowest, 0);
    }
}
