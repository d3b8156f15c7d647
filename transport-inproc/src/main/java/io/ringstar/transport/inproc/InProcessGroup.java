package io.ringstar.transport.inproc;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PeerFailureException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The state the ranks of one in-process group share: one bounded message queue per ordered pair
 * of ranks, which rank has joined or closed, and the barrier.
 */
final class InProcessGroup {
    /** A send waits while this many bytes are queued on its link and not yet received. */
    static final long HIGH_WATERMARK_BYTES = 64L << 20;
    /**
     * Free message buffers kept per link for reuse: the ring keeps two messages in flight per link,
     * the star four, plus one being copied out.
     */
    private static final int POOLED_BUFFERS_PER_LINK = 6;
    /** Message buffers are allocated in multiples of this, so that chunks of near-equal size reuse them. */
    private static final int ALLOCATION_GRANULE = 64 * 1024;

    final int worldSize;
    final Duration timeout;
    private final Link[][] links;
    private final ReentrantLock stateLock = new ReentrantLock();
    private final Condition stateChanged = stateLock.newCondition();
    private final boolean[] joined;
    private final boolean[] closed;
    private final boolean[] atBarrier;
    private long barrierGeneration;
    private int barrierArrivals;

    InProcessGroup(int worldSize, Duration timeout) {
        this.worldSize = worldSize;
        this.timeout = timeout;
        this.links = new Link[worldSize][worldSize];
        for (int src = 0; src < worldSize; src++) {
            for (int dst = 0; dst < worldSize; dst++) {
                links[src][dst] = src == dst ? null : new Link();
            }
        }
        this.joined = new boolean[worldSize];
        this.closed = new boolean[worldSize];
        this.atBarrier = new boolean[worldSize];
    }

    /** Marks {@code rank} as joined; false if it had joined already. */
    boolean join(int rank) {
        stateLock.lock();
        try {
            if (joined[rank]) {
                return false;
            }
            joined[rank] = true;
            stateChanged.signalAll();
            return true;
        } finally {
            stateLock.unlock();
        }
    }

    /** Waits until every rank has joined; returns the ranks still missing when the time ran out. */
    List<Integer> awaitAllJoined(Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        stateLock.lock();
        try {
            while (true) {
                List<Integer> missing = new ArrayList<>();
                for (int r = 0; r < worldSize; r++) {
                    if (!joined[r]) {
                        missing.add(r);
                    }
                }
                long remaining = deadline - System.nanoTime();
                if (missing.isEmpty() || remaining <= 0) {
                    return missing;
                }
                stateChanged.awaitNanos(remaining);
            }
        } finally {
            stateLock.unlock();
        }
    }

    /** Marks {@code rank} closed and wakes everyone who waits on it; true if every rank is closed now. */
    boolean close(int rank) {
        stateLock.lock();
        try {
            closed[rank] = true;
            stateChanged.signalAll();
        } finally {
            stateLock.unlock();
        }
        for (int other = 0; other < worldSize; other++) {
            if (other != rank) {
                links[rank][other].wake();
                links[other][rank].wake();
            }
        }
        stateLock.lock();
        try {
            for (boolean c : closed) {
                if (!c) {
                    return false;
                }
            }
            return true;
        } finally {
            stateLock.unlock();
        }
    }

    boolean isClosed(int rank) {
        stateLock.lock();
        try {
            return closed[rank];
        } finally {
            stateLock.unlock();
        }
    }

    void send(int src, int dst, ByteBuffer header, ByteBuffer payload) {
        links[src][dst].send(src, dst, header, payload);
    }

    int recv(int dst, int src, ByteBuffer into, boolean exact, Duration wait) {
        return links[src][dst].recv(dst, src, into, exact, wait);
    }

    void barrier(int rank) {
        long deadline = System.nanoTime() + timeout.toNanos();
        stateLock.lock();
        try {
            long generation = barrierGeneration;
            atBarrier[rank] = true;
            if (++barrierArrivals == worldSize) {
                barrierGeneration++;
                barrierArrivals = 0;
                Arrays.fill(atBarrier, false);
                stateChanged.signalAll();
                return;
            }
            while (barrierGeneration == generation) {
                for (int r = 0; r < worldSize; r++) {
                    if (closed[r] && !atBarrier[r]) {
                        leaveBarrier(rank);
                        throw new PeerFailureException("barrier", rank, r, "rank " + r + " closed its transport");
                    }
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    List<Integer> missing = new ArrayList<>();
                    for (int r = 0; r < worldSize; r++) {
                        if (!atBarrier[r]) {
                            missing.add(r);
                        }
                    }
                    leaveBarrier(rank);
                    throw new CollectiveTimeoutException("barrier", rank, missing.get(0),
                            "ranks " + missing + " did not reach the barrier within " + timeout);
                }
                try {
                    stateChanged.awaitNanos(remaining);
                } catch (InterruptedException e) {
                    leaveBarrier(rank);
                    Thread.currentThread().interrupt();
                    throw new CollectiveException("barrier", rank, CollectiveException.NO_RANK,
                            "interrupted while waiting", e);
                }
            }
        } finally {
            stateLock.unlock();
        }
    }

    private void leaveBarrier(int rank) {
        atBarrier[rank] = false;
        barrierArrivals--;
    }

    /** The queue from one rank to another, bounded by {@link #HIGH_WATERMARK_BYTES}. */
    private final class Link {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>();
        private final ArrayDeque<ByteBuffer> pool = new ArrayDeque<>();
        private long queuedBytes;

        void wake() {
            lock.lock();
            try {
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }

        void send(int src, int dst, ByteBuffer header, ByteBuffer payload) {
            int length = header.remaining() + payload.remaining();
            long deadline = System.nanoTime() + timeout.toNanos();
            lock.lock();
            try {
                while (true) {
                    if (isClosed(dst)) {
                        throw new PeerFailureException("send", src, dst, "rank " + dst + " closed its transport");
                    }
                    // A message is admitted whenever the link is below the watermark, so one larger
                    // than the watermark still goes through an empty link.
                    if (queuedBytes < HIGH_WATERMARK_BYTES) {
                        break;
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        throw new CollectiveTimeoutException("send", src, dst, "rank " + dst + " has not taken the "
                                + queuedBytes + " bytes queued for it within " + timeout);
                    }
                    awaitOrThrow(remaining, "send", src, dst);
                }
                ByteBuffer message = take(length);
                message.put(header.duplicate()).put(payload.duplicate()).flip();
                queue.addLast(message);
                queuedBytes += length;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }

        int recv(int dst, int src, ByteBuffer into, boolean exact, Duration wait) {
            long deadline = System.nanoTime() + wait.toNanos();
            lock.lock();
            try {
                while (queue.isEmpty()) {
                    if (isClosed(src)) {
                        throw new PeerFailureException("recv", dst, src,
                                "rank " + src + " closed its transport and sent nothing more");
                    }
                    if (isClosed(dst)) {
                        throw new IllegalStateException("recv on rank " + dst + ": the transport is closed");
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        throw new CollectiveTimeoutException("recv", dst, src,
                                "no message from rank " + src + " within " + wait);
                    }
                    awaitOrThrow(remaining, "recv", dst, src);
                }
                ByteBuffer message = queue.peekFirst();
                int length = message.remaining();
                if (exact ? length != into.remaining() : length > into.remaining()) {
                    throw new CollectiveMismatchException("recv", dst, src, "the next message from rank "
                            + src + " is " + length + " bytes, the receive buffer "
                            + (exact ? "expects exactly " : "holds at most ") + into.remaining()
                            + " bytes; the message stays queued");
                }
                queue.pollFirst();
                into.put(message);
                queuedBytes -= length;
                if (pool.size() < POOLED_BUFFERS_PER_LINK) {
                    pool.addLast(message.clear());
                }
                changed.signalAll();
                return length;
            } finally {
                lock.unlock();
            }
        }

        /** A pooled buffer of at least {@code length} bytes, or a new one. */
        private ByteBuffer take(int length) {
            for (int i = 0; i < pool.size(); i++) {
                ByteBuffer candidate = pool.pollFirst();
                if (candidate.capacity() >= length) {
                    return candidate.clear().limit(length);
                }
                pool.addLast(candidate);
            }
            if (pool.size() >= POOLED_BUFFERS_PER_LINK) {
                pool.pollFirst();
            }
            return ByteBuffer.allocateDirect(roundedCapacity(length)).limit(length);
        }

        /** Small messages get the next power of two, large ones the next multiple of the granule. */
        private int roundedCapacity(int length) {
            if (length <= ALLOCATION_GRANULE) {
                return Math.max(64, Integer.highestOneBit(Math.max(1, length - 1)) << 1);
            }
            long granules = ((long) length + ALLOCATION_GRANULE - 1) / ALLOCATION_GRANULE;
            return (int) Math.min(Integer.MAX_VALUE, granules * ALLOCATION_GRANULE);
        }

        private void awaitOrThrow(long nanos, String operation, int rank, int peer) {
            try {
                changed.awaitNanos(Math.min(nanos, TimeUnit.MILLISECONDS.toNanos(100)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException(operation, rank, peer, "interrupted while waiting", e);
            }
        }
    }
}
