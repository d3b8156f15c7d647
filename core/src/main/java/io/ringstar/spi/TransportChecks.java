package io.ringstar.spi;

import java.time.Duration;

/**
 * The argument and state checks every {@link io.ringstar.Transport} makes before it does anything,
 * with one wording for all transports. Each throws at once; none blocks.
 */
public final class TransportChecks {
    private TransportChecks() {
    }

    /**
     * @throws IllegalStateException naming the operation and the rank if the transport is closed
     */
    public static void checkOpen(boolean closed, String operation, int rank) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank + ": the transport is closed");
        }
    }

    /**
     * Returns {@code rank}, for use in a constructor's {@code super} call.
     *
     * @throws IllegalArgumentException if {@code rank} is not a rank of a group of {@code worldSize}
     */
    public static int checkRank(int rank, int worldSize) {
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not a rank of a group of " + worldSize);
        }
        return rank;
    }

    /**
     * @throws IllegalArgumentException if a transport's {@code timeout} is null, zero or negative
     */
    public static void checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
    }

    /**
     * @throws IllegalArgumentException if {@code peer} is not another rank of a group of {@code worldSize}
     */
    public static void checkPeer(String operation, int rank, int worldSize, int peer) {
        if (peer < 0 || peer >= worldSize || peer == rank) {
            throw new IllegalArgumentException(operation + " on rank " + rank + ": peer rank " + peer
                    + " is not another rank of this group of " + worldSize);
        }
    }

    /**
     * @throws IllegalArgumentException if {@code wait} is null, zero or negative
     */
    public static void checkWait(String operation, int rank, Duration wait) {
        if (wait == null || wait.isNegative() || wait.isZero()) {
            throw new IllegalArgumentException(operation + " on rank " + rank + ": timeout must be positive, was "
                    + wait);
        }
    }
}
