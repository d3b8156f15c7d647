package io.ringstar.spi;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.Transport.MessageHandler;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Who moves a {@link PeerTransport}'s bytes, and when: the I/O lock, how a call takes and leaves
 * it, how a caller waits while it drives the I/O, and the background reader between calls. The
 * transport supplies {@link #progress}, one round of its I/O, and may refine {@link #poll},
 * {@link #wakeUp} and {@link #parksOutsideIo}. Owned by {@link PeerTransport}, whose superclass it
 * is (a superclass rather than a field, so that every call reaches this state as directly as
 * before). The schedule of a wait (spin, yield, block) and the background reader's hand-over are
 * described on {@link PeerTransport}.
 */
abstract class ProgressEngine {
    /**
     * Spin phase of a wait, on a host with a core for each of the group's busy threads; with more
     * of them than cores there is none ({@link #spinNanosFor}): a spinning rank keeps the core that
     * the rank it waits for needs. Measured with three rank processes on 2 cores over Netty, the
     * communicator's calls of 16 B to 64 KiB took 0.15-0.67 of their time with the spin (an
     * all-reduce of 16 B 27 us against 146 us; BENCHMARKS.md, "Waiting without spinning"); with two
     * ranks on 2 cores, spinning is what brings a 1 KiB all-reduce to 10-20 us.
     */
    public static final long SPIN_NANOS = 50_000;
    /** {@code waitSpin} value: spin unless the host has more of the group's busy threads than cores. */
    public static final String WAIT_SPIN_AUTO = "auto";
    /** {@code waitSpin} value: always spin first (ranks pinned to cores of their own, say). */
    public static final String WAIT_SPIN_ON = "on";
    /** {@code waitSpin} value: never spin; a wait yields at once. */
    public static final String WAIT_SPIN_OFF = "off";
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
    /** Spins a waiter outside the I/O lock makes between two looks at its inbox. */
    private static final int SPINS_OUTSIDE_IO = 32;
    /** How long the background thread blocks at a time while it reads for an idle rank. */
    static final long BACKGROUND_BLOCK_NANOS = 50_000_000;

    final String name;
    final int rank;
    /** Element {@code r} for peer {@code r}, null for this rank; replaced once, by {@code start}. */
    PeerChannel[] channels;
    final IoLock io = new IoLock();
    /** Calls in progress (and threads that took the lock with {@link #lockIo}): the reader stays away. */
    private final AtomicInteger calls = new AtomicInteger();
    private volatile long lastCallEnded = System.nanoTime();
    volatile boolean closed;
    /** The thread running {@code close}, which may still wait for its goodbyes to go out. */
    volatile Thread closing;
    /** The background reader, if it runs; set under the transport's lifecycle lock. */
    Thread background;
    /** Spinning rounds so far; under the I/O lock. */
    private int spins;
    /** This transport's spin phase, {@link #SPIN_NANOS} or 0; set once, before any call ({@link #spinNanosFor}). */
    private volatile long spinNanos = SPIN_NANOS;
    /** What the transport counted for the spin rule; set with {@link #spinNanos}. */
    private volatile int busyThreadsOnThisHost = 1;

    ProgressEngine(String name, int rank, int worldSize) {
        this.name = name;
        this.rank = rank;
        this.channels = new PeerChannel[worldSize];
    }

    // ---- what a transport supplies ----

    /**
     * One round of I/O for every peer: moves whatever can be moved now (reads into the inboxes,
     * which hand the bytes a waiting receiver wants straight to its handler). With
     * {@code blockNanos} above zero it may first wait up to that long for something to happen,
     * returning as soon as bytes arrive or {@link #wakeUp} is called. Called by the I/O lock's
     * holder only. Must not throw for a peer's failure: it fails that peer's channel instead.
     *
     * @return how much was moved (bytes, fragments; any positive number), 0 if nothing was
     */
    protected abstract int progress(long blockNanos);

    /**
     * A quick look at one peer only, the one a caller waits for: what a spinning wait does in most
     * of its rounds, since a look at every peer costs more (a selector's system call, say).
     * {@link #progress} still runs every {@value #SPINS_PER_FULL_ROUND} rounds, so the others keep
     * moving. Default: {@link #progress} itself.
     */
    protected int poll(PeerChannel awaited) {
        return progress(0);
    }

    /** Makes a {@link #progress} that blocks in another thread return soon. */
    protected abstract void wakeUp();

    /**
     * Whether a waiting caller blocks outside the I/O lock, parked until a sender of its own
     * process wakes it through {@link PeerChannel#wakeWaiter} (an in-process transport, whose
     * peers write into this rank's inboxes under its lock), instead of inside {@link #progress}.
     */
    protected boolean parksOutsideIo() {
        return false;
    }

    // ---- waiting ----

    /**
     * The spin phase of a wait: {@link #SPIN_NANOS} or 0 as {@code choice} says, and for
     * {@link #WAIT_SPIN_AUTO} 0 when the group's busy threads on this host ({@code busyThreads}: its
     * ranks, this one included, and the media drivers that move their bytes over a network) outnumber
     * {@code cores}, as Open MPI yields instead of busy-polling on an oversubscribed node.
     */
    static long spinNanosFor(String choice, int busyThreads, int cores) {
        switch (choice) {
            case WAIT_SPIN_ON:
                return SPIN_NANOS;
            case WAIT_SPIN_OFF:
                return 0;
            case WAIT_SPIN_AUTO:
                return busyThreads > cores ? 0 : SPIN_NANOS;
            default:
                throw new IllegalArgumentException("waitSpin must be auto, on or off, was " + choice);
        }
    }

    /** Sets the spin phase ({@link #spinNanosFor}) against the cores the JVM may use. */
    final void chooseSpin(String choice, int busyThreads) {
        busyThreadsOnThisHost = busyThreads;
        spinNanos = spinNanosFor(choice, busyThreads, Runtime.getRuntime().availableProcessors());
    }

    /** The spin phase of this transport's waits, in nanoseconds: for tests and diagnostics. */
    public final long spinNanos() {
        return spinNanos;
    }

    /** The group's busy threads on this host as the transport counted them at its start: for tests and diagnostics. */
    public final int busyThreadsOnThisHost() {
        return busyThreadsOnThisHost;
    }

    /**
     * One round of waiting, for a caller that holds the I/O lock and waits for I/O (a receive, a
     * barrier, or a write held back by its peer): spins, yields or blocks according to how long it
     * has waited since {@code waitStart} (see the class comment), never past {@code deadline}.
     * While it blocks outside the lock, {@code waitingOn}'s inbox is detached from
     * {@code handler}, so no other thread calls it.
     *
     * @return what the round moved (0 for nothing)
     */
    public final int awaitRound(long waitStart, Deadline deadline, PeerChannel waitingOn,
            MessageHandler handler) {
        if (closed && closing != Thread.currentThread()) {
            throw new IllegalStateException("a call on rank " + rank + " was waiting when the transport closed");
        }
        long waited = System.nanoTime() - waitStart;
        if (io.hasQueuedThreads()) {
            // Another caller waits for the lock (a thread of its own per peer): let it have a turn.
            return shareIo(waitingOn, handler, deadline);
        }
        if (parksOutsideIo()) {
            return awaitOutsideIo(waited, deadline, waitingOn, handler);
        }
        long spin = spinNanos;
        if (waited < spin) {
            return waitingOn != null && (++spins & (SPINS_PER_FULL_ROUND - 1)) != 0 ? poll(waitingOn) : progress(0);
        }
        if (waited < YIELD_NANOS) {
            Thread.yield();
            return progress(0);
        }
        return progress(blockNanos(waited, deadline));
    }

    /**
     * {@link #awaitRound} for a transport whose peers write into this rank's inboxes under its
     * lock: every phase of the wait happens outside the lock (holding it while spinning would only
     * keep those peers out), and a parked waiter is woken by the peer that writes.
     */
    private int awaitOutsideIo(long waited, Deadline deadline, PeerChannel waitingOn, MessageHandler handler) {
        Thread self = Thread.currentThread();
        PeerChannel[] registered = waitingOn != null ? null : channels;
        setWaiter(waitingOn, registered, self);
        if (waitingOn != null) {
            waitingOn.inbox.detach(false);
        }
        int holds = io.releaseAll();
        try {
            if (waited < spinNanos) {
                for (int i = 0; i < SPINS_OUTSIDE_IO; i++) {
                    Thread.onSpinWait();
                }
            } else if (waited < YIELD_NANOS) {
                Thread.yield();
            } else if (!closed) {
                LockSupport.parkNanos(this, blockNanos(waited, deadline));
            }
        } finally {
            io.retake(holds);
            setWaiter(waitingOn, registered, null);
            if (waitingOn != null && handler != null) {
                waitingOn.inbox.attach(handler);
            }
        }
        return 0;
    }

    /** How long a wait in its blocking phase blocks: a tenth of the time waited, within the cap and the deadline. */
    private static long blockNanos(long waited, Deadline deadline) {
        return Math.min(Math.min(waited / 10, MAX_BLOCK_NANOS), Math.max(1, deadline.remainingNanos()));
    }

    private static void setWaiter(PeerChannel one, PeerChannel[] all, Thread thread) {
        if (one != null) {
            one.waiter = thread;
        } else {
            for (PeerChannel channel : all) {
                if (channel != null) {
                    channel.waiter = thread;
                }
            }
        }
    }

    private int shareIo(PeerChannel waitingOn, MessageHandler handler, Deadline deadline) {
        if (waitingOn != null) {
            waitingOn.inbox.detach(false);
        }
        int holds = io.releaseAll();
        try {
            Thread.yield();
        } finally {
            io.retake(holds);
            if (waitingOn != null && handler != null) {
                waitingOn.inbox.attach(handler);
            }
        }
        return 0;
    }

    /** Wakes every waiter: the one blocked in {@link #progress} and those parked outside the lock. */
    final void wakeAll() {
        wakeUp();
        for (PeerChannel channel : channels) {
            if (channel != null) {
                channel.wakeWaiter();
            }
        }
        Thread reader = background;
        if (reader != null) {
            LockSupport.unpark(reader);
        }
    }

    /** Fails every peer with {@code reason} (the medium under all of them failed). */
    protected final void failAll(String reason, Throwable cause) {
        for (PeerChannel channel : channels) {
            if (channel != null) {
                channel.fail(reason, cause);
            }
        }
    }

    // ---- the I/O lock outside calls ----

    /**
     * Takes the I/O lock for work on a thread that is not in a call (set-up, another rank's send),
     * waking the background reader if it has the lock; counts as a call meanwhile, so the reader
     * stays away until {@link #unlockIo}.
     */
    protected final void lockIo() {
        calls.incrementAndGet();
        if (!io.tryLock()) {
            wakeUp();
            Thread reader = background;
            if (reader != null) {
                LockSupport.unpark(reader);
            }
            io.acquire();
        }
    }

    /** Releases {@link #lockIo}. */
    protected final void unlockIo() {
        exit();
    }

    /**
     * Lets go of the calling thread's holds on the I/O lock for a moment (an in-process send, which
     * must take the receiving rank's lock and may not hold its own meanwhile, or two ranks sending
     * to each other would deadlock); give the result to {@link #retakeIo}.
     */
    protected final int releaseIoForAWhile() {
        return io.releaseAll();
    }

    /** Takes back the holds {@link #releaseIoForAWhile} let go of. */
    protected final void retakeIo(int holds) {
        io.retake(holds);
    }

    // ---- calls ----

    final void checkNotClosed(String operation) {
        TransportChecks.checkOpen(closed, operation, rank);
    }

    /**
     * Takes the I/O lock for a call, waking the background reader if it has it; at most until the
     * deadline. A call that got the lock only after close took and released it fails as any call
     * after close does: nothing may follow the goodbye.
     */
    final void enter(String operation, int peer, Deadline deadline) {
        checkNotClosed(operation);
        calls.incrementAndGet();
        lockForCall(operation, peer, deadline);
        if (closed && closing != Thread.currentThread()) {
            exit();
            checkNotClosed(operation);
        }
    }

    private void lockForCall(String operation, int peer, Deadline deadline) {
        if (io.tryLock()) {
            return;
        }
        wakeUp();
        Thread reader = background;
        if (reader != null) {
            LockSupport.unpark(reader);
        }
        if (io.tryBriefly()) {
            return;
        }
        boolean locked = false;
        try {
            locked = io.tryLock(Math.max(0, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            calls.decrementAndGet();
            throw new CollectiveException(operation, rank, peer, "interrupted while waiting to drive the transport", e);
        }
        if (!locked) {
            calls.decrementAndGet();
            throw new CollectiveTimeoutException(operation, rank, peer, "another call kept this rank's transport busy"
                    + " for longer than the timeout of " + deadline.timeout());
        }
    }

    /** Leaves a call (or {@link #lockIo}): releases the lock and lets the reader count from now. */
    final void exit() {
        io.unlock();
        lastCallEnded = System.nanoTime();
        calls.decrementAndGet();
    }

    // ---- between calls ----

    /** Starts the background reader; called once, under the transport's lifecycle lock. */
    final void startReader() {
        background = new Thread(new BackgroundReader(this), "ringstar-" + name + "-rank" + rank + "-progress");
        background.setDaemon(true);
        background.start();
    }

    /** Whether a call (or a {@link #lockIo} holder) is in progress: the background reader stays away. */
    final boolean inCall() {
        return calls.get() > 0;
    }

    /** When the last call ended, by {@link System#nanoTime()}. */
    final long lastCallEnded() {
        return lastCallEnded;
    }
}
