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
 * it, how a caller waits while it drives the I/O (on the transport's {@link WaitSchedule}), the
 * closed state, and the background reader between calls. One per transport, held in its final
 * field {@code engine} and made by its constructor; the I/O itself is the transport's
 * ({@link PeerTransport#progress}, {@link PeerTransport#poll}, {@link PeerTransport#wakeUp}).
 *
 * <p>Its waits also serve the {@link TransportProbe}: they write the status replies owed to peers at
 * their safe points (through its {@link StatusExchange}), call the wait watcher once they block, and
 * count how long receives and barriers waited.
 *
 * <p>An object of its own rather than the transport's superclass (as it was): a call reaches this
 * state through one more final field. Measured when the change was made (with the {@link Inbox}
 * and Aeron channel split the same way), on a 2-core VM shared with other jobs, the median ratio
 * after/before of the p50 times of alternated {@code bench --algorithm comm --op allreduce} runs
 * was 1.00-1.05 over Netty with 2 ranks, 0.99 with 3, and 1.05 over Aeron with 2: within that
 * machine's noise (single runs differed by 2x and more). JMH's 64 KiB ping-pong over Netty was
 * bimodal in both versions (forks at about 40 or 105 us a round trip) and its ratio per round
 * ranged 0.76-1.96 (median 1.10): not resolved there; to be measured again on a quiet machine.
 */
final class ProgressEngine {
    /** Spins a waiter outside the I/O lock makes between two looks at its inbox. */
    private static final int SPINS_OUTSIDE_IO = 32;
    /** How long the background thread blocks at a time while it reads for an idle rank. */
    static final long BACKGROUND_BLOCK_NANOS = 50_000_000;

    /** The transport whose I/O this engine drives. */
    final PeerTransport owner;
    final String name;
    final int rank;
    /** Element {@code r} for peer {@code r}, null for this rank; replaced once, by the transport's start. */
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
    /** Set once, by the transport's start, before any call. */
    volatile WaitSchedule schedule = WaitSchedule.UNSTARTED;
    /**
     * Some channel owes its peer a status reply ({@link PeerChannel#replyOwed}). Under the I/O lock; a
     * field of this object, so that the spinning wait reads it without a second hop.
     */
    boolean repliesOwed;
    /** The status queries and replies, failure reports and peer events of this transport. */
    final StatusExchange exchange = new StatusExchange(this);
    /** Heard by every blocking round of a receive's or barrier's wait; null for none. */
    volatile TransportProbe.WaitWatcher watcher;
    /**
     * Guards the count of waits below, so that a reader sees each wait once: ended or in progress.
     * Taken twice per wait that blocks at all, and once per reading (twice per observed call).
     */
    private final Object waits = new Object();
    /** Nanoseconds the receives and barriers that ended have waited. Under {@link #waits}. */
    private long waitedEnded;
    /** Receives and barriers waiting now, and the sum of their starts (nanoTime). Under {@link #waits}. */
    private int openWaits;
    private long openWaitsBegan;
    /** Some channel has an incoming shared-memory ring: the rounds poll the rings. Set once, at the start. */
    private volatile boolean hasRings;
    /** The peer a receive waits for now, or -1. */
    volatile int waitingOn = -1;

    // ---- a receive posted before a send (PeerTransport.sendAndReceive); under the I/O lock ----
    /** The inbox whose message a send's waits hand to {@link #postedHandler}, or null. */
    private PeerChannel posted;
    private MessageHandler postedHandler;
    /**
     * The thread whose send the posting serves. Only its own waits pause and resume the posting:
     * another thread's I/O never calls the handler, and a second posting waits for this one to end.
     */
    private Thread postedBy;
    /**
     * How many pauses of the posting thread are open (they nest: a write out of band may share the
     * I/O lock in turn); the handler is attached only while none is. Changed by the posting thread only.
     */
    private int postedPauses;
    /** The posted message's length once it came whole during the send, else -1. */
    private int postedLength = -1;
    /** What the posted handler threw during the send, rethrown once the send is done. */
    private RuntimeException postedFailure;

    ProgressEngine(PeerTransport owner, String name, int rank, int worldSize) {
        this.owner = owner;
        this.name = name;
        this.rank = rank;
        this.channels = new PeerChannel[worldSize];
    }

    // ---- waiting ----

    /**
     * One round of waiting (see {@link PeerTransport#awaitRound}). Owed status replies go out here,
     * before the round's I/O: in the spinning phase only on its rounds that look at every peer (the
     * rounds that look at one peer read nothing more), and in the later phases on every round. In
     * the blocking phase of every wait (a receive's, a barrier's, a send's held back by its peer: a
     * rank blocked sending to a stopped peer must warn too), the {@link #watcher} hears of it before
     * the round blocks.
     */
    int awaitRound(long waitStart, Deadline deadline, PeerChannel waitingOn, MessageHandler handler) {
        if (closed && closing != Thread.currentThread()) {
            throw new IllegalStateException("a call on rank " + rank + " was waiting when the transport closed");
        }
        long waited = System.nanoTime() - waitStart;
        if (io.hasQueuedThreads()) {
            // Another caller waits for the lock (a thread of its own per peer): let it have a turn.
            return shareIo(waitingOn, handler);
        }
        PeerTransport transport = owner;
        if (transport.parksOutsideIo()) {
            return awaitOutsideIo(waited, deadline, waitingOn, handler);
        }
        if (waited < schedule.spinNanos()) {
            if (waitingOn != null && (++spins & (WaitSchedule.SPINS_PER_FULL_ROUND - 1)) != 0) {
                int fromRing = waitingOn.sharedMemory.poll(false);
                return fromRing > 0 ? fromRing : transport.poll(waitingOn);
            }
            if (repliesOwed) {
                outOfBand(waitingOn, handler, null);
            }
            return pollRings() + transport.progress(0);
        }
        if (waited < WaitSchedule.YIELD_NANOS) {
            if (repliesOwed) {
                outOfBand(waitingOn, handler, null);
            }
            Thread.yield();
            return pollRings() + transport.progress(0);
        }
        TransportProbe.WaitWatcher watching = watcher;
        if (repliesOwed || watching != null) {
            outOfBand(waitingOn, handler, watching);
            if (waitingOn != null && waitingOn.inbox.completed() >= 0) {
                // The message came whole while the handler was attached again: no need to block.
                return 0;
            }
        }
        int fromRings = pollRings();
        if (fromRings > 0) {
            // Bytes came through shared memory, which no selector sees: look again before blocking.
            return fromRings + transport.progress(0);
        }
        return transport.progress(WaitSchedule.blockNanos(waited, deadline));
    }

    /**
     * One round of I/O between calls (the background reader's): the rings, then the transport's
     * own, blocking at most {@code blockNanos}, or at most {@link WaitSchedule#MAX_BLOCK_NANOS}
     * while peers write through rings (no selector wakes up for them).
     */
    int backgroundRound(long blockNanos) {
        int fromRings = pollRings();
        long block = fromRings > 0 ? 0 : hasRings ? Math.min(blockNanos, WaitSchedule.MAX_BLOCK_NANOS) : blockNanos;
        return fromRings + owner.progress(block);
    }

    /** Takes what every peer's incoming shared-memory ring holds, as far as its inbox has room. */
    int pollRings() {
        if (!hasRings) {
            return 0;
        }
        int moved = 0;
        for (PeerChannel channel : channels) {
            if (channel != null) {
                moved += channel.sharedMemory.poll(false);
            }
        }
        return moved;
    }

    /** Notes whether any channel reads a ring (after the shared-memory negotiation). */
    void noteRings() {
        boolean any = false;
        for (PeerChannel channel : channels) {
            any |= channel != null && channel.sharedMemory.in != null;
        }
        hasRings = any;
    }

    /**
     * Writes the owed status replies and calls {@code watching} (if not null), with the awaited
     * inbox detached from {@code handler} meanwhile: a write that waits for its peer may let
     * another thread drive the I/O, which must not call the receiver's handler.
     */
    private void outOfBand(PeerChannel waitingOn, MessageHandler handler, TransportProbe.WaitWatcher watching) {
        if (waitingOn != null) {
            waitingOn.inbox.detach(false);
        }
        pausePosted();
        try {
            if (repliesOwed) {
                exchange.answerOwed();
            }
            if (watching != null) {
                watching.waiting(owner);
            }
        } finally {
            if (waitingOn != null && handler != null) {
                waitingOn.inbox.attach(handler);
            }
            resumePosted();
        }
    }

    /**
     * Attaches {@code handler} to {@code channel}'s inbox for the duration of the calling thread's
     * send, so that what the send's waits read from that peer goes to it at once
     * ({@link PeerTransport#sendAndReceive}). Refused (false, nothing attached) while another
     * thread's posting is open, paused because that thread let this one have the I/O lock: one
     * posting at a time, and the caller receives after its send instead.
     */
    boolean post(PeerChannel channel, MessageHandler handler) {
        if (posted != null) {
            return false;
        }
        posted = channel;
        postedHandler = handler;
        postedBy = Thread.currentThread();
        postedPauses = 0;
        postedLength = -1;
        postedFailure = null;
        channel.inbox.attach(handler);
        return true;
    }

    /**
     * Ends the calling thread's posting (after a {@link #post} that returned true): the posted
     * message's length if it came whole, else -1 (the receive is still to be made). With
     * {@code abandon} (the send failed), a message the handler began is given up. Without, a
     * failure of the handler is thrown now, after the send, as the receive would have.
     */
    int unpost(boolean abandon) {
        PeerChannel channel = posted;
        pausePosted();
        int length = postedLength;
        RuntimeException failure = postedFailure;
        posted = null;
        postedHandler = null;
        postedBy = null;
        postedPauses = 0;
        postedFailure = null;
        if (abandon) {
            channel.inbox.detach(true);
        }
        if (length >= 0 || abandon) {
            channel.onTaken();
        }
        if (failure != null && !abandon) {
            throw failure;
        }
        return length;
    }

    /**
     * Detaches the posted inbox while another thread may drive the I/O (or this one writes out of
     * band), keeping a completion or a failure that happened while it was attached: the handler is
     * called on the posting thread only, and never for a message after the posted one. Does
     * nothing on any other thread (the posting is paused already whenever such a thread holds the
     * lock); pair each call with {@link #resumePosted}.
     */
    void pausePosted() {
        PeerChannel channel = posted;
        if (channel == null || postedBy != Thread.currentThread() || postedPauses++ > 0) {
            return;
        }
        if (postedLength < 0 && postedFailure == null) {
            postedLength = channel.inbox.completed();
            postedFailure = channel.inbox.takeHandlerFailure();
            channel.inbox.detach(false);
        }
    }

    /**
     * Ends a {@link #pausePosted} of the posting thread; the last open one attaches the posted inbox
     * again, unless its message is done or failed. Does nothing on any other thread.
     */
    void resumePosted() {
        PeerChannel channel = posted;
        if (channel == null || postedBy != Thread.currentThread() || --postedPauses > 0) {
            return;
        }
        if (postedLength < 0 && postedFailure == null) {
            channel.inbox.attach(postedHandler);
        }
    }

    /** A receive or barrier has to wait (its first waiting round): returns the start to give {@link #endWait}. */
    long beginWait() {
        long now = System.nanoTime();
        synchronized (waits) {
            openWaits++;
            openWaitsBegan += now;
        }
        return now;
    }

    /**
     * Accounts for a wait of a receive or barrier that began at {@code began} ({@link #beginWait})
     * and ends now; a receive's also stops naming its peer.
     */
    void endWait(long began, boolean receive) {
        long now = System.nanoTime();
        synchronized (waits) {
            waitedEnded += now - began;
            openWaits--;
            openWaitsBegan -= began;
        }
        if (receive) {
            waitingOn = -1;
        }
    }

    /**
     * See {@link TransportProbe#waitedNanos}: the waits that ended, and those in progress up to now,
     * so that a dump taken while a call hangs shows how long it has waited.
     */
    long waitedNanos() {
        synchronized (waits) {
            // Read under the lock: every start counted is then at most now. No clock read when no wait
            // is open, the usual case: the engine reads this before and after each call, not waiting.
            return openWaits == 0 ? waitedEnded : waitedEnded + openWaits * System.nanoTime() - openWaitsBegan;
        }
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
        pausePosted();
        try {
            if (waited >= WaitSchedule.YIELD_NANOS) {
                TransportProbe.WaitWatcher watching = watcher;
                if (watching != null) {
                    // Before parking, with the lock still held, as the watcher's contract says.
                    watching.waiting(owner);
                }
            }
            int holds = io.releaseAll();
            try {
                if (waited < schedule.spinNanos()) {
                    for (int i = 0; i < SPINS_OUTSIDE_IO; i++) {
                        Thread.onSpinWait();
                    }
                } else if (waited < WaitSchedule.YIELD_NANOS) {
                    Thread.yield();
                } else if (!closed) {
                    LockSupport.parkNanos(this, WaitSchedule.blockNanos(waited, deadline));
                }
            } finally {
                io.retake(holds);
            }
        } finally {
            setWaiter(waitingOn, registered, null);
            if (waitingOn != null && handler != null) {
                waitingOn.inbox.attach(handler);
            }
            resumePosted();
        }
        return 0;
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

    private int shareIo(PeerChannel waitingOn, MessageHandler handler) {
        if (waitingOn != null) {
            waitingOn.inbox.detach(false);
        }
        pausePosted();
        int holds = io.releaseAll();
        try {
            Thread.yield();
        } finally {
            io.retake(holds);
            if (waitingOn != null && handler != null) {
                waitingOn.inbox.attach(handler);
            }
            resumePosted();
        }
        return 0;
    }

    /** Wakes every waiter: the one blocked in the transport's progress and those parked outside the lock. */
    void wakeAll() {
        owner.wakeUp();
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
    void failAll(String reason, Throwable cause) {
        for (PeerChannel channel : channels) {
            if (channel != null) {
                channel.fail(reason, cause);
            }
        }
    }

    // ---- the I/O lock outside calls ----

    /** See {@link PeerTransport#lockIo}. */
    void lockIo() {
        calls.incrementAndGet();
        if (!io.tryLock()) {
            wakeReader();
            io.acquire();
        }
    }

    /**
     * Takes the I/O lock as {@link #lockIo} does, but waits at most {@code nanos} for it; false if it
     * did not get it (then nothing is to be released). Release with {@link #exit}.
     */
    boolean lockBriefly(long nanos) {
        calls.incrementAndGet();
        if (io.tryLock()) {
            return true;
        }
        wakeReader();
        boolean locked = false;
        try {
            locked = io.tryLock(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!locked) {
            calls.decrementAndGet();
        }
        return locked;
    }

    /** Makes whoever drives the I/O between calls let go of it soon: a blocked progress, the background reader. */
    private void wakeReader() {
        owner.wakeUp();
        Thread reader = background;
        if (reader != null) {
            LockSupport.unpark(reader);
        }
    }

    // ---- calls ----

    void checkNotClosed(String operation) {
        TransportChecks.checkOpen(closed, operation, rank);
    }

    /**
     * Takes the I/O lock for a call, waking the background reader if it has it; at most until the
     * deadline. A call that got the lock only after close took and released it fails as any call
     * after close does: nothing may follow the goodbye.
     */
    void enter(String operation, int peer, Deadline deadline) {
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
        wakeReader();
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
    void exit() {
        io.unlock();
        lastCallEnded = System.nanoTime();
        calls.decrementAndGet();
    }

    // ---- between calls ----

    /** Starts the background reader; called once, under the transport's lifecycle lock. */
    void startReader() {
        background = new Thread(new BackgroundReader(this), "ringstar-" + name + "-rank" + rank + "-progress");
        background.setDaemon(true);
        background.start();
    }

    /** Whether a call (or a {@link #lockIo} holder) is in progress: the background reader stays away. */
    boolean inCall() {
        return calls.get() > 0;
    }

    /** When the last call ended, by {@link System#nanoTime()}. */
    long lastCallEnded() {
        return lastCallEnded;
    }
}
