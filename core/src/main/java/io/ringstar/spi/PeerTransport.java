package io.ringstar.spi;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The skeleton of a transport with one {@link PeerChannel} per peer, written once for Netty,
 * Aeron and in-process: the argument checks, deadlines, barrier epochs, the first failure of each
 * peer, the closed state and the close order, and who moves the bytes when. A transport supplies
 * its set-up (in its constructor, ending with {@link #start}), its per-peer channels, and
 * {@link #progress}, one round of its I/O.
 *
 * <p><b>Progress.</b> One lock, the I/O lock, is held by whoever moves bytes. A call takes it and
 * while it waits drives the I/O itself: reads every peer's bytes into their inboxes, handing its
 * own message's bytes straight to its handler, and writes its own sends (MPI's progress engine,
 * Gloo's synchronous mode). No message crosses threads on the way. Waiting spins for
 * {@value #SPIN_NANOS} ns, then yields (staying runnable, but giving the core to any rank that
 * needs it) until {@value #YIELD_NANOS} ns, then blocks for short, bounded times that grow with
 * the wait (a tenth of it, at most {@value #MAX_BLOCK_NANOS} ns): a socket transport blocks in
 * its selector, which wakes the moment bytes arrive; a polling transport parks. Any progress
 * starts the schedule again. So a rank that has waited a few milliseconds (a slow peer, a compute
 * step between calls) stops using its core.
 *
 * <p>Between calls, a background thread (if the transport asks for one) takes the lock once no
 * call has been in progress for {@value #HANDOVER_NANOS} ns and keeps reading, so a peer's sends
 * do not stall on a rank that computes; a call that arrives wakes it and takes the lock back.
 *
 * <p><b>Rules settled here for every transport.</b> A call after {@link #close()}, or one waiting
 * when another thread closes, throws {@link IllegalStateException}. Barriers are numbered 1, 2, ...
 * per transport, and a peer's barrier record must carry exactly the next number, or the peer is
 * failed. From one peer, at most {@code receiveBufferBytes} wait to be received before reading from
 * it stops, twice that while this rank is itself sending to it (so that two ranks that both send
 * before they receive do not hold each other back), and a message already begun is always read to
 * its end; past that the peer's sends wait, at most until their deadline.
 */
public abstract class PeerTransport implements Transport {
    /** Spin phase of a wait. */
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
    /** Longest block: what an idle rank wakes up for, and the most a bounded wait oversleeps. */
    public static final long MAX_BLOCK_NANOS = 1_000_000;
    /** Time without a call after which the background thread takes over the reading. */
    public static final long HANDOVER_NANOS = 2_000_000;
    /**
     * In a spinning wait, one round in this many looks at every peer; the others at the awaited one.
     * A power of two: the rounds are counted with a mask.
     */
    public static final int SPINS_PER_FULL_ROUND = 8;
    /** Spinning rounds so far; under the I/O lock. */
    private int spins;
    /** Spins a waiter outside the I/O lock makes between two looks at its inbox. */
    private static final int SPINS_OUTSIDE_IO = 32;
    /** Attempts at the I/O lock, spinning and then yielding, before a thread queues for it. */
    private static final int SPINS_FOR_LOCK = 256;
    private static final int YIELDS_FOR_LOCK = 16;
    /** How long the background thread blocks at a time while it reads for an idle rank. */
    static final long BACKGROUND_BLOCK_NANOS = 50_000_000;
    /** How long close waits for callers to leave before it frees the I/O resources anyway. */
    static final long CLOSE_LOCK_OUT_NANOS = 1_000_000_000L;
    /** The longest close spends saying goodbye. */
    static final Duration GOODBYE_WAIT = Duration.ofSeconds(2);

    private static final System.Logger LOG = System.getLogger(PeerTransport.class.getName());

    private final String name;
    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private PeerChannel[] channels;
    private final ReentrantLock io = new ReentrantLock();
    private final AtomicInteger calls = new AtomicInteger();
    private volatile long lastCallEnded = System.nanoTime();
    private final Object lifecycle = new Object();
    private volatile boolean closed;
    /** The thread running {@link #close()}, which may still wait for its goodbyes to go out. */
    private volatile Thread closing;
    private boolean started;
    private Thread background;
    /** The last barrier this rank entered. Under the I/O lock. */
    private long barrierEpoch;

    /**
     * @param name the transport's name, for thread names and messages
     * @param timeout the bound of every wait without a deadline of its own
     */
    protected PeerTransport(String name, int rank, int worldSize, Duration timeout) {
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not a rank of a group of " + worldSize);
        }
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        this.name = name;
        this.rank = rank;
        this.worldSize = worldSize;
        this.timeout = timeout;
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

    /** Whether to run the background thread that reads between calls. */
    protected boolean readsInBackground() {
        return true;
    }

    /**
     * Before the channels close: anything the transport must do while its peers can still hear it
     * (Aeron waits until each peer has read this rank's goodbye). Called by close, with the I/O
     * lock held if it could be taken. Default: nothing.
     */
    protected void beforeChannelsClose(Deadline deadline) {
    }

    /**
     * Frees what the transport holds besides its channels (selector, listener, media driver),
     * last in {@link #close()}.
     *
     * @param othersMayBeInside true if a caller did not leave the I/O in time
     */
    protected abstract void release(boolean othersMayBeInside);

    /**
     * Ends the set-up: installs the channels (element {@code r} for peer {@code r}, null for this
     * rank) and starts the background thread if the transport reads in the background.
     */
    protected final void start(PeerChannel[] peers) {
        if (peers.length != worldSize) {
            throw new IllegalArgumentException("expected " + worldSize + " channels, got " + peers.length);
        }
        this.channels = peers.clone();
        synchronized (lifecycle) {
            started = true;
            if (closed || worldSize == 1 || !readsInBackground()) {
                return;
            }
            background = new Thread(this::readBetweenCalls, "ringstar-" + name + "-rank" + rank + "-progress");
            background.setDaemon(true);
            background.start();
        }
    }

    // ---- the Transport contract ----

    @Override
    public final int rank() {
        return rank;
    }

    @Override
    public final int worldSize() {
        return worldSize;
    }

    @Override
    public final Duration timeout() {
        return timeout;
    }

    /** True once {@link #close()} has begun. */
    public final boolean isClosed() {
        return closed;
    }

    @Override
    public final void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        PeerChannel channel = channel("send", destRank);
        long length = (long) header.remaining() + payload.remaining();
        if (length > Frame.MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("send on rank " + rank + ": a message of " + length + " bytes to rank "
                    + destRank + " is longer than the " + Frame.MAX_MESSAGE_BYTES + " one message carries");
        }
        enter("send", destRank, deadline);
        try {
            channel.send(Frame.DATA, length, header, payload, deadline, "send");
        } finally {
            exit();
        }
    }

    @Override
    public final int receive(int srcRank, MessageHandler handler, Deadline deadline) {
        PeerChannel channel = channel("recv", srcRank);
        Inbox inbox = channel.inbox;
        enter("recv", srcRank, deadline);
        boolean whole = false;
        try {
            inbox.attach(handler);
            long waitStart = System.nanoTime();
            while (true) {
                RuntimeException thrown = inbox.takeHandlerFailure();
                if (thrown != null) {
                    throw thrown;
                }
                int length = inbox.completed();
                if (length >= 0) {
                    whole = true;
                    return length;
                }
                checkNotClosed("recv");
                if (channel.gone()) {
                    throw channel.failed("recv", inbox.isEmpty() ? null
                            : "; its last message was cut short");
                }
                if (deadline.passed()) {
                    throw new CollectiveTimeoutException("recv", rank, srcRank, (inbox.isEmpty()
                            ? "no message from rank " + srcRank : "the rest of a message from rank " + srcRank
                            + " did not come") + " within the timeout of " + deadline.timeout());
                }
                if (awaitRound(waitStart, deadline, channel, handler) > 0) {
                    waitStart = System.nanoTime();
                }
            }
        } finally {
            inbox.detach(!whole);
            channel.onTaken();
            exit();
        }
    }

    @Override
    public final void barrier() {
        Deadline deadline = Deadline.after(timeout);
        enter("barrier", CollectiveException.NO_RANK, deadline);
        try {
            long epoch = ++barrierEpoch;
            for (PeerChannel channel : channels) {
                if (channel != null) {
                    channel.send(Frame.BARRIER, epoch, MessageCopy.NO_BYTES, MessageCopy.NO_BYTES, deadline, "barrier");
                }
            }
            long waitStart = System.nanoTime();
            while (true) {
                List<Integer> missing = null;
                for (PeerChannel channel : channels) {
                    if (channel != null && channel.barrierEpoch() < epoch) {
                        if (channel.gone()) {
                            throw channel.failed("barrier", null);
                        }
                        if (missing == null) {
                            missing = new ArrayList<>();
                        }
                        missing.add(channel.peer());
                    }
                }
                if (missing == null) {
                    return;
                }
                checkNotClosed("barrier");
                if (deadline.passed()) {
                    throw new CollectiveTimeoutException("barrier", rank, missing.get(0), "ranks " + missing
                            + " did not reach the barrier within " + timeout);
                }
                if (awaitRound(waitStart, deadline, null, null) > 0) {
                    waitStart = System.nanoTime();
                }
            }
        } finally {
            exit();
        }
    }

    /**
     * Says goodbye to every peer still there, lets the transport finish what its peers must hear
     * ({@link #beforeChannelsClose}), closes the channels and releases the rest, in that order and
     * each step bounded in time: callers that wait are woken and throw
     * {@link IllegalStateException}, and the I/O is freed after at most about a second even if one
     * of them does not leave. Idempotent.
     */
    @Override
    public final void close() {
        Thread reader;
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            closing = Thread.currentThread();
            reader = background;
        }
        wakeAll();
        if (reader != null) {
            try {
                reader.join(TimeUnit.NANOSECONDS.toMillis(CLOSE_LOCK_OUT_NANOS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        boolean locked = false;
        try {
            locked = io.tryLock(CLOSE_LOCK_OUT_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            if (started) {
                Deadline goodbye = Deadline.after(timeout.compareTo(GOODBYE_WAIT) < 0 ? timeout : GOODBYE_WAIT);
                if (locked) {
                    sayGoodbye(goodbye);
                    beforeChannelsClose(goodbye);
                }
            }
            for (PeerChannel channel : channels) {
                if (channel != null) {
                    channel.inbox.close();
                    try {
                        channel.closeChannel();
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.DEBUG, "rank " + rank + ": closing the channel to rank "
                                + channel.peer() + ": " + e);
                    }
                }
            }
        } finally {
            try {
                release(!locked || (reader != null && reader.isAlive()));
            } finally {
                if (locked) {
                    io.unlock();
                }
            }
        }
    }

    private void sayGoodbye(Deadline deadline) {
        for (PeerChannel channel : channels) {
            if (channel != null && !channel.gone()) {
                try {
                    channel.send(Frame.GOODBYE, 0, MessageCopy.NO_BYTES, MessageCopy.NO_BYTES, deadline, "close");
                } catch (RuntimeException e) {
                    // A peer that cannot be told (it failed meanwhile, say) learns it from the closed stream.
                    LOG.log(System.Logger.Level.DEBUG, "rank " + rank + " could not say goodbye to rank "
                            + channel.peer() + ": " + e.getMessage());
                }
            }
        }
    }

    // ---- for transports ----

    /** The channel to {@code peer}; for transports' own code. */
    protected final PeerChannel channelOf(int peer) {
        return channels[peer];
    }

    /** Fails every peer with {@code reason} (the medium under all of them failed). */
    protected final void failAll(String reason, Throwable cause) {
        for (PeerChannel channel : channels) {
            if (channel != null) {
                channel.fail(reason, cause);
            }
        }
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
        if (waited < SPIN_NANOS) {
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
        int holds = releaseIo();
        try {
            if (waited < SPIN_NANOS) {
                for (int i = 0; i < SPINS_OUTSIDE_IO; i++) {
                    Thread.onSpinWait();
                }
            } else if (waited < YIELD_NANOS) {
                Thread.yield();
            } else if (!closed) {
                LockSupport.parkNanos(this, blockNanos(waited, deadline));
            }
        } finally {
            reacquireIo(holds);
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
        int holds = releaseIo();
        try {
            Thread.yield();
        } finally {
            reacquireIo(holds);
            if (waitingOn != null && handler != null) {
                waitingOn.inbox.attach(handler);
            }
        }
        return 0;
    }

    /** Releases every hold this thread has on the I/O lock; returns how many to take back. */
    private int releaseIo() {
        int holds = io.getHoldCount();
        for (int i = 0; i < holds; i++) {
            io.unlock();
        }
        return holds;
    }

    /** Takes the I/O lock back {@code holds} times; unbounded, since this thread's own caller holds it again after. */
    private void reacquireIo(int holds) {
        if (holds == 0) {
            return;
        }
        acquire();
        for (int i = 1; i < holds; i++) {
            io.lock();
        }
    }

    /**
     * Takes the I/O lock, trying for a while before it queues: holders keep it for microseconds,
     * and a queued thread costs a park, an unpark and an allocation.
     */
    private void acquire() {
        if (!tryBriefly()) {
            io.lock();
        }
    }

    /**
     * Tries the I/O lock for a short while without queueing: spinning (the holder runs on another
     * core), then yielding (it was preempted, as happens with more ranks than cores).
     */
    private boolean tryBriefly() {
        for (int i = 0; i < SPINS_FOR_LOCK; i++) {
            if (io.tryLock()) {
                return true;
            }
            Thread.onSpinWait();
        }
        for (int i = 0; i < YIELDS_FOR_LOCK; i++) {
            Thread.yield();
            if (io.tryLock()) {
                return true;
            }
        }
        return false;
    }

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
            acquire();
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
        return releaseIo();
    }

    /** Takes back the holds {@link #releaseIoForAWhile} let go of. */
    protected final void retakeIo(int holds) {
        reacquireIo(holds);
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

    // ---- calls ----

    private PeerChannel channel(String operation, int peer) {
        checkNotClosed(operation);
        if (peer < 0 || peer >= worldSize || peer == rank) {
            throw new IllegalArgumentException(operation + " on rank " + rank + ": peer rank " + peer
                    + " is not another rank of this group of " + worldSize);
        }
        return channels[peer];
    }

    private void checkNotClosed(String operation) {
        if (closed) {
            throw new IllegalStateException(operation + " on rank " + rank + ": the transport is closed");
        }
    }

    /**
     * Takes the I/O lock for a call, waking the background reader if it has it; at most until the
     * deadline. A call that got the lock only after close took and released it fails as any call
     * after close does: nothing may follow the goodbye.
     */
    private void enter(String operation, int peer, Deadline deadline) {
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
        if (tryBriefly()) {
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

    private void exit() {
        io.unlock();
        lastCallEnded = System.nanoTime();
        calls.decrementAndGet();
    }

    /** The background thread: reads for the rank while no call is in progress. */
    private void readBetweenCalls() {
        while (!closed) {
            long idle = System.nanoTime() - lastCallEnded;
            if (calls.get() > 0 || idle < HANDOVER_NANOS) {
                LockSupport.parkNanos(this, calls.get() > 0 ? HANDOVER_NANOS : HANDOVER_NANOS - idle);
                continue;
            }
            if (!io.tryLock()) {
                LockSupport.parkNanos(this, HANDOVER_NANOS);
                continue;
            }
            try {
                while (!closed && calls.get() == 0) {
                    progress(BACKGROUND_BLOCK_NANOS);
                }
            } catch (RuntimeException | Error e) {
                LOG.log(System.Logger.Level.ERROR, "rank " + rank + "'s " + name + " reader failed: " + e);
                failAll("the background reader of rank " + rank + " failed: " + e, e);
                return;
            } finally {
                io.unlock();
            }
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{rank=" + rank + ", worldSize=" + worldSize + '}';
    }
}
