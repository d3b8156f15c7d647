package io.ringstar.spi;

import io.ringstar.Deadline;

/**
 * How long a waiting call of a {@link PeerTransport} spins, yields and blocks (the schedule its
 * class comment describes), chosen once per transport at its start from the option
 * {@code waitSpin} and the group's busy threads on this host. Immutable; a transport makes one with
 * {@link #choose} and hands it to {@link PeerTransport#start}.
 */
public final class WaitSchedule {
    /**
     * Spin phase of a wait, on a host with a core for each of the group's busy threads; with more
     * of them than cores there is none ({@link #choose}): a spinning rank keeps the core that the
     * rank it waits for needs. Measured with three rank processes on 2 cores over Netty, the
     * communicator's calls of 16 B to 64 KiB took 0.15-0.67 of their time with the spin (an
     * all-reduce of 16 B 27 us against 146 us; BENCHMARKS.md, "Waiting without spinning"); with two
     * ranks on 2 cores, spinning is what brings a 1 KiB all-reduce to 10-20 us.
     */
    public static final long SPIN_NANOS = 50_000;
    /**
     * End of the yield phase of a wait. A thread that yields stays runnable, so it sees its bytes
     * the moment they arrive; one that blocks must be woken, and on a machine with as many busy
     * ranks as cores a woken thread can wait behind the rank that woke it for its whole time
     * slice. Measured with two rank processes on 2 cores, a 256 KiB exchange took 370-410 us with
     * 200 us of yielding and 90 us with 5 ms; four ranks on 2 cores did better with yielding than
     * with spinning, which keeps the core the peer needs.
     */
    public static final long YIELD_NANOS = 5_000_000;
    /**
     * Longest block: what an idle rank wakes up for, and the most a bounded wait oversleeps. Reached
     * after 40 ms of waiting, so an oversleep stays within a tenth of the wait. Each wake-up costs
     * some 30 us of CPU on a 2-core VM (timer, scheduler, one round of polling): with a 1 ms cap a
     * rank waiting for a slow peer used 3% of a core for its caller's thread alone, and an Aeron
     * rank, whose driver thread wakes as often, 9-11% in all; with 4 ms, 2% and 6-7%.
     */
    public static final long MAX_BLOCK_NANOS = 4_000_000;
    /** Time without a call after which the background thread takes over the reading. */
    public static final long HANDOVER_NANOS = 2_000_000;
    /**
     * In a spinning wait, one round in this many looks at every peer; the others at the awaited one.
     * A power of two: the rounds are counted with a mask.
     */
    public static final int SPINS_PER_FULL_ROUND = 8;

    /** Before a transport's start: spin, as with one busy thread. */
    static final WaitSchedule UNSTARTED = new WaitSchedule(SPIN_NANOS, 1);

    private final long spinNanos;
    private final int busyThreadsOnThisHost;

    private WaitSchedule(long spinNanos, int busyThreadsOnThisHost) {
        this.spinNanos = spinNanos;
        this.busyThreadsOnThisHost = busyThreadsOnThisHost;
    }

    /**
     * The schedule for a transport whose host runs {@code busyThreadsOnThisHost} of the group's
     * busy threads, against the cores the JVM may use.
     *
     * @param waitSpin {@value PeerTransport#WAIT_SPIN_AUTO} (waits spin unless the busy threads
     *     outnumber the cores, as Open MPI yields instead of busy-polling on an oversubscribed node),
     *     {@value PeerTransport#WAIT_SPIN_ON} or {@value PeerTransport#WAIT_SPIN_OFF}
     * @param busyThreadsOnThisHost how many of the group's ranks, this one included, run on this
     *     host, plus the media drivers that move their bytes, as far as the transport can tell
     *     ({@link SameHost}); at least 1
     * @throws IllegalArgumentException if {@code waitSpin} is none of the three, or the count is below 1
     */
    public static WaitSchedule choose(String waitSpin, int busyThreadsOnThisHost) {
        if (busyThreadsOnThisHost < 1) {
            throw new IllegalArgumentException("busy threads on this host must be at least 1, was "
                    + busyThreadsOnThisHost);
        }
        int cores = Runtime.getRuntime().availableProcessors();
        return new WaitSchedule(spinNanosFor(waitSpin, busyThreadsOnThisHost, cores), busyThreadsOnThisHost);
    }

    /** The spin phase for {@code choice} with {@code busyThreads} on {@code cores}: {@link #SPIN_NANOS} or 0. */
    static long spinNanosFor(String choice, int busyThreads, int cores) {
        switch (choice) {
            case PeerTransport.WAIT_SPIN_ON:
                return SPIN_NANOS;
            case PeerTransport.WAIT_SPIN_OFF:
                return 0;
            case PeerTransport.WAIT_SPIN_AUTO:
                return busyThreads > cores ? 0 : SPIN_NANOS;
            default:
                throw new IllegalArgumentException("waitSpin must be auto, on or off, was " + choice);
        }
    }

    /** The spin phase of a wait, in nanoseconds: {@link #SPIN_NANOS} or 0. */
    public long spinNanos() {
        return spinNanos;
    }

    /** The group's busy threads on this host that the schedule was chosen for. */
    public int busyThreadsOnThisHost() {
        return busyThreadsOnThisHost;
    }

    /** How long a wait in its blocking phase blocks: a tenth of the time waited, within the cap and the deadline. */
    static long blockNanos(long waited, Deadline deadline) {
        return Math.min(Math.min(waited / 10, MAX_BLOCK_NANOS), Math.max(1, deadline.remainingNanos()));
    }

    @Override
    public String toString() {
        return "WaitSchedule{spinNanos=" + spinNanos + ", busyThreadsOnThisHost=" + busyThreadsOnThisHost + '}';
    }
}
