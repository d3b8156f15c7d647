package io.ringstar.transport.inproc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the ranks of one in-process group share: which transport is which rank, and which have
 * joined or closed. The messages themselves go straight from a sender into the receiver's inbox.
 */
final class InProcessGroup {
    final int worldSize;
    final Duration timeout;
    private final InProcessTransport[] members;
    private final boolean[] closed;

    InProcessGroup(int worldSize, Duration timeout) {
        this.worldSize = worldSize;
        this.timeout = timeout;
        this.members = new InProcessTransport[worldSize];
        this.closed = new boolean[worldSize];
    }

    /** Makes {@code transport} the group's rank {@code rank}; false if that rank has joined already. */
    synchronized boolean join(int rank, InProcessTransport transport) {
        if (members[rank] != null) {
            return false;
        }
        members[rank] = transport;
        notifyAll();
        return true;
    }

    /** The transport of {@code rank}, or null before it joined. */
    synchronized InProcessTransport member(int rank) {
        return members[rank];
    }

    /** Waits until every rank has joined; returns the ranks still missing when the time ran out. */
    synchronized List<Integer> awaitAllJoined(Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            List<Integer> missing = new ArrayList<>();
            for (int r = 0; r < worldSize; r++) {
                if (members[r] == null) {
                    missing.add(r);
                }
            }
            long remaining = deadline - System.nanoTime();
            if (missing.isEmpty() || remaining <= 0) {
                return missing;
            }
            wait(Math.max(1, remaining / 1_000_000));
        }
    }

    synchronized boolean isClosed(int rank) {
        return closed[rank];
    }

    /** Marks {@code rank} closed; true if every rank is closed now. */
    synchronized boolean close(int rank) {
        closed[rank] = true;
        for (boolean c : closed) {
            if (!c) {
                return false;
            }
        }
        return true;
    }
}
