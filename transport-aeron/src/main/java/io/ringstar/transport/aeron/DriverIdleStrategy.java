package io.ringstar.transport.aeron;

import java.util.concurrent.locks.LockSupport;
import org.agrona.concurrent.IdleStrategy;

/**
 * The embedded driver's back-off (option {@value AeronTransport#IDLE_OPTION} {@code backoff}, the
 * default): like Agrona's {@code BackoffIdleStrategy} it spins, yields, then parks for times that
 * double from 1 us to 1 ms; past that, as the ranks' own waits do, the longest park grows with the
 * time the driver has found no work, a tenth of it, up to {@value #LONGEST_PARK_NANOS} ns.
 *
 * <p>Why: a driver thread that wakes every millisecond costs some 5% of a core on a 2-core VM
 * while its rank computes or waits for a slow peer, more than the rank's own threads. Why it does
 * not delay the rank's own traffic: a park longer than 1 ms ends as soon as the rank sends or
 * begins to wait ({@link #wake}), and the back-off starts again from its shortest park. What a
 * long park can delay is a peer's packet that arrives while this rank has been waiting for it a
 * long time already, by at most a tenth of that time (the ranks' own rule for oversleeping).
 *
 * <p>Thread-safety: {@link #idle} and {@link #reset} run on the driver's thread only; {@link #wake}
 * on any thread, at any time, without blocking.
 */
final class DriverIdleStrategy implements IdleStrategy {
    /** Agrona's defaults for its back-off, which this one keeps below 1 ms. */
    private static final int SPINS = 10;
    private static final int YIELDS = 5;
    private static final long SHORTEST_PARK_NANOS = 1_000;
    private static final long SHORT_PARK_NANOS = 1_000_000;
    /** The longest park, reached after 80 ms without work. */
    static final long LONGEST_PARK_NANOS = 8_000_000;

    private int spins;
    private int yields;
    /** The next park, 0 while spinning or yielding. */
    private long parkNanos;
    /** When the current run of idle rounds began parking. */
    private long idleSince;
    /** Set by {@link #wake}, cleared by the driver's thread once it has looked. */
    private volatile boolean wakeRequested;
    /** The driver's thread while it is in a long park, for {@link #wake}. */
    private volatile Thread sleeper;

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        if (spins < SPINS) {
            spins++;
            Thread.onSpinWait();
            return;
        }
        if (yields < YIELDS) {
            yields++;
            Thread.yield();
            return;
        }
        long now = System.nanoTime();
        if (parkNanos == 0) {
            idleSince = now;
            parkNanos = SHORTEST_PARK_NANOS;
        }
        long park = parkNanos;
        parkNanos = Math.min(parkNanos * 2, LONGEST_PARK_NANOS);
        if (park <= SHORT_PARK_NANOS) {
            LockSupport.parkNanos(this, park);
            return;
        }
        park = Math.min(park, Math.max(SHORT_PARK_NANOS, (now - idleSince) / 10));
        // Published before the flag is read, and the flag is set before wake reads this: one of the
        // two sides sees the other, so a wake is never lost between the check and the park.
        sleeper = Thread.currentThread();
        if (!wakeRequested) {
            LockSupport.parkNanos(this, park);
        }
        sleeper = null;
        if (wakeRequested) {
            wakeRequested = false;
            reset();
        }
    }

    @Override
    public void reset() {
        spins = 0;
        yields = 0;
        parkNanos = 0;
    }

    /**
     * Ends a long park now, or keeps the next one from starting; the driver then backs off again
     * from its shortest park. Costs one volatile read when a wake is already pending.
     */
    void wake() {
        if (!wakeRequested) {
            wakeRequested = true;
            Thread thread = sleeper;
            if (thread != null) {
                LockSupport.unpark(thread);
            }
        }
    }

    @Override
    public String alias() {
        return "ringstar-backoff";
    }
}
