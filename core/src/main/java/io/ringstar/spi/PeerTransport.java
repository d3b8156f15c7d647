package io.ringstar.spi;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The skeleton of a transport with one {@link PeerChannel} per peer, written once for Netty,
 * Aeron and in-process: the argument checks, deadlines, barrier epochs, the first failure of each
 * peer, the closed state and the close order, and who moves the bytes when. A transport supplies
 * its set-up (in its constructor, ending with {@link #start}), its per-peer channels, and
 * {@link #progress}, one round of its I/O.
 *
 * <p>The work is shared out: this class keeps the {@link Transport} contract (the calls, the
 * barrier, the close order); its superclass, the package's {@code ProgressEngine}, keeps the I/O
 * lock and the waiting; {@link TransportChecks} words the argument checks; {@link PeerChannel}
 * keeps each peer's state and first failure; {@link Inbox} each peer's received bytes.
 *
 * <p><b>Progress.</b> One lock, the I/O lock, is held by whoever moves bytes. A call takes it and
 * while it waits drives the I/O itself: reads every peer's bytes into their inboxes, handing its
 * own message's bytes straight to its handler, and writes its own sends (MPI's progress engine,
 * Gloo's synchronous mode). No message crosses threads on the way. Waiting spins for
 * {@value #SPIN_NANOS} ns (not at all when this host runs more of the group's busy threads than
 * it has cores, or as option {@code waitSpin} says: see {@link #start}), then yields (staying
 * runnable, but giving the core to any rank that needs it) until {@value #YIELD_NANOS} ns, then
 * blocks for short, bounded times that grow with the wait (a tenth of it, at most
 * {@value #MAX_BLOCK_NANOS} ns): a socket transport blocks in its selector, which wakes the
 * moment bytes arrive; a polling transport parks. Any progress starts the schedule again. So a
 * rank that has waited a few milliseconds (a slow peer, a compute step between calls) stops using
 * its core.
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
public abstract class PeerTransport extends ProgressEngine implements Transport {
    private final int worldSize;
    private final Duration timeout;
    /** Guards the start and the beginning of close against each other. */
    private final Object lifecycle = new Object();
    private boolean started;
    /** The last barrier this rank entered. Under the I/O lock. */
    private long barrierEpoch;

    /**
     * @param name the transport's name, for thread names and messages
     * @param timeout the bound of every wait without a deadline of its own
     */
    protected PeerTransport(String name, int rank, int worldSize, Duration timeout) {
        super(name, TransportChecks.checkRank(rank, worldSize), worldSize);
        TransportChecks.checkTimeout(timeout);
        this.worldSize = worldSize;
        this.timeout = timeout;
    }

    // ---- what a transport supplies, besides progress ----

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
     *
     * @param busyThreadsOnThisHost how many of the group's ranks, this one included, run on this
     *     host, plus the media drivers that move their bytes, as far as the transport can tell
     *     ({@link SameHost}); at least 1
     * @param waitSpin {@value #WAIT_SPIN_AUTO} (waits spin unless the busy threads outnumber the
     *     cores the JVM may use), {@value #WAIT_SPIN_ON} or {@value #WAIT_SPIN_OFF}
     */
    protected final void start(PeerChannel[] peers, int busyThreadsOnThisHost, String waitSpin) {
        if (peers.length != worldSize) {
            throw new IllegalArgumentException("expected " + worldSize + " channels, got " + peers.length);
        }
        if (busyThreadsOnThisHost < 1) {
            throw new IllegalArgumentException("busy threads on this host must be at least 1, was "
                    + busyThreadsOnThisHost);
        }
        chooseSpin(waitSpin, busyThreadsOnThisHost);
        this.channels = peers.clone();
        synchronized (lifecycle) {
            started = true;
            if (closed || worldSize == 1 || !readsInBackground()) {
                return;
            }
            startReader();
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
        boolean wasStarted;
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            closing = Thread.currentThread();
            reader = background;
            wasStarted = started;
        }
        CloseSequence.run(this, wasStarted, reader);
    }

    // ---- for transports ----

    /** The channel to {@code peer}; for transports' own code. */
    protected final PeerChannel channelOf(int peer) {
        return channels[peer];
    }

    private PeerChannel channel(String operation, int peer) {
        checkNotClosed(operation);
        TransportChecks.checkPeer(operation, rank, worldSize, peer);
        return channels[peer];
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{rank=" + rank + ", worldSize=" + worldSize + '}';
    }
}
