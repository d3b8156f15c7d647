package io.ringstar.spi;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.Transport;
import io.ringstar.Transport.MessageHandler;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The skeleton of a transport with one {@link PeerChannel} per peer, written once for Netty,
 * Aeron and in-process: the argument checks, deadlines, barrier epochs, the first failure of each
 * peer, the closed state and the close order, and who moves the bytes when. A transport supplies
 * its set-up (in its constructor, ending with {@link #start}), its per-peer channels, and
 * {@link #progress}, one round of its I/O.
 *
 * <p>The work is shared out, each part an object of its own: this class keeps the
 * {@link Transport} contract (the calls, the barrier, the close order); a {@code ProgressEngine}
 * (package-private, one per transport, in a final field) keeps the I/O lock, the waiting and the
 * background reader; a {@link WaitSchedule} says how long a wait spins, yields and blocks;
 * {@link TransportChecks} words the argument checks; {@link PeerChannel} keeps each peer's state
 * and first failure; {@link Inbox} each peer's received bytes. A new kind of link (a shared-memory
 * channel to a peer on the same host, say) is one more {@link PeerChannel} subclass that the
 * transport installs for that peer in {@link #start}.
 *
 * <p><b>Progress.</b> One lock, the I/O lock, is held by whoever moves bytes. A call takes it and
 * while it waits drives the I/O itself: reads every peer's bytes into their inboxes, handing its
 * own message's bytes straight to its handler, and writes its own sends (MPI's progress engine,
 * Gloo's synchronous mode). No message crosses threads on the way. Waiting spins for
 * {@value WaitSchedule#SPIN_NANOS} ns (not at all when this host runs more of the group's busy
 * threads than it has cores, or as option {@code waitSpin} says: see {@link WaitSchedule#choose}),
 * then yields (staying runnable, but giving the core to any rank that needs it) until
 * {@value WaitSchedule#YIELD_NANOS} ns, then blocks for short, bounded times that grow with the
 * wait (a tenth of it, at most {@value WaitSchedule#MAX_BLOCK_NANOS} ns): a socket transport blocks
 * in its selector, which wakes the moment bytes arrive; a polling transport parks. Any progress
 * starts the schedule again. So a rank that has waited a few milliseconds (a slow peer, a compute
 * step between calls) stops using its core.
 *
 * <p>Between calls, a background thread (if the transport asks for one) takes the lock once no
 * call has been in progress for {@value WaitSchedule#HANDOVER_NANOS} ns and keeps reading, so a
 * peer's sends do not stall on a rank that computes; a call that arrives wakes it and takes the
 * lock back.
 *
 * <p><b>Rules settled here for every transport.</b> A call after {@link #close()}, or one waiting
 * when another thread closes, throws {@link IllegalStateException}. Barriers are numbered 1, 2, ...
 * per transport, and a peer's barrier record must carry exactly the next number, or the peer is
 * failed. From one peer, at most {@code receiveBufferBytes} wait to be received before reading from
 * it stops, twice that while this rank is itself sending to it (so that two ranks that both send
 * before they receive do not hold each other back), and a message already begun is always read to
 * its end; past that the peer's sends wait, at most until their deadline.
 *
 * <p><b>Observed.</b> Every transport built here is a {@link TransportProbe}. Its status queries,
 * replies and failure reports are {@link Frame} records like the barrier's, so every transport
 * carries them; a query is answered by whoever holds the I/O lock at a safe point (the background
 * reader after each of its rounds, a waiting caller in its waiting rounds), never from inside
 * {@link #progress}, and never on a channel in the middle of a frame. A transport whose records
 * cannot be answered so (in-process: no background reader, and peers that write on their own
 * threads) reads its peers' status directly instead ({@link #statusWithoutAsking}). Receives and
 * barriers count their waits from their first waiting round to their end (a wait in progress counts
 * up to now); one that does not wait costs nothing more.
 */
public abstract class PeerTransport implements Transport, TransportProbe {
    /** {@code waitSpin} value: spin unless the host has more of the group's busy threads than cores. */
    public static final String WAIT_SPIN_AUTO = "auto";
    /** {@code waitSpin} value: always spin first (ranks pinned to cores of their own, say). */
    public static final String WAIT_SPIN_ON = "on";
    /** {@code waitSpin} value: never spin; a wait yields at once. */
    public static final String WAIT_SPIN_OFF = "off";

    /** The I/O lock, the waiting, the closed state and the background reader. */
    final ProgressEngine engine;
    private final int rank;
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
        this.engine = new ProgressEngine(this, name, TransportChecks.checkRank(rank, worldSize), worldSize);
        TransportChecks.checkTimeout(timeout);
        this.rank = rank;
        this.worldSize = worldSize;
        this.timeout = timeout;
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
     * {@link #progress} still runs every {@value WaitSchedule#SPINS_PER_FULL_ROUND} rounds, so the
     * others keep moving. Default: {@link #progress} itself.
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

    /**
     * The status {@code peer} answers with, read without a record, or {@link #NO_ANSWER} (the
     * default) to ask it with a {@link Frame#STATUS_QUERY} record. For a transport whose records
     * nobody would answer: an in-process one, whose peers' transports are in this JVM and whose
     * {@link #statusToAnswer} it may read. Called by {@link #askStatus} on the asking thread,
     * possibly with this transport's I/O lock held: must be quick and must not block.
     */
    protected long statusWithoutAsking(int peer) {
        return NO_ANSWER;
    }

    /**
     * Whether {@code peer} may run on this host, by what the transport knows of it without a
     * lookup (a loopback connection, an equal address: {@link SameHost}): such peers are offered a
     * shared-memory ring by {@link #startSharedMemory},
     * and the file is the proof. Default: false.
     */
    protected boolean mayShareMemoryWith(int peer) {
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
     * rank) and the schedule of every wait, and starts the background thread if the transport
     * reads in the background.
     *
     * @param schedule how waits spin, yield and block on this host ({@link WaitSchedule#choose})
     */
    protected final void start(PeerChannel[] peers, WaitSchedule schedule) {
        if (peers.length != worldSize) {
            throw new IllegalArgumentException("expected " + worldSize + " channels, got " + peers.length);
        }
        engine.schedule = Objects.requireNonNull(schedule, "schedule");
        engine.channels = peers.clone();
        synchronized (lifecycle) {
            started = true;
            if (engine.closed || worldSize == 1 || !readsInBackground()) {
                return;
            }
            engine.startReader();
        }
    }

    /**
     * For a network transport whose peers on this host may talk through shared memory: agrees with
     * every peer over the channels that {@link #start} installed which pairs use a ring (see
     * {@code SharedMemoryNegotiation}; the peers {@link #mayShareMemoryWith} names are offered one),
     * within the transport's timeout, and switches those channels over. Call once, after
     * {@link #start} and before the constructor returns (no call of the user's may run meanwhile);
     * every rank of the group must do it, since each waits for every peer's part. With
     * {@code sharedMemory=off} it still answers the peers' offers (with no).
     *
     * @throws CollectiveTimeoutException if a peer did not take part within the timeout
     * @throws CollectiveException if a peer failed meanwhile, or with {@code sharedMemory=on} if a
     *     pair cannot use shared memory (naming the rank, the peer and the cause)
     */
    protected final void startSharedMemory(SharedMemoryOptions options) {
        Objects.requireNonNull(options, "options");
        if (worldSize == 1) {
            return;
        }
        engine.lockIo();
        try {
            SharedMemoryNegotiation.run(this, engine.channels, options, Deadline.after(timeout));
        } finally {
            engine.noteRings();
            engine.exit();
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
        return engine.closed;
    }

    /** The length of a message to send, checked against what one message carries. */
    private long messageLength(int destRank, ByteBuffer header, ByteBuffer payload) {
        long length = (long) header.remaining() + payload.remaining();
        if (length > Frame.MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("send on rank " + rank + ": a message of " + length + " bytes to rank "
                    + destRank + " is longer than the " + Frame.MAX_MESSAGE_BYTES + " one message carries");
        }
        return length;
    }

    @Override
    public final void send(int destRank, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        PeerChannel channel = channel("send", destRank);
        long length = messageLength(destRank, header, payload);
        engine.enter("send", destRank, deadline);
        try {
            channel.send(Frame.DATA, length, header, payload, deadline, "send");
        } finally {
            engine.exit();
        }
    }

    @Override
    public final int receive(int srcRank, MessageHandler handler, Deadline deadline) {
        PeerChannel channel = channel("recv", srcRank);
        Inbox inbox = channel.inbox;
        engine.enter("recv", srcRank, deadline);
        boolean whole = false;
        // Set at the first waiting round only: a receive that finds its message costs no more.
        boolean waited = false;
        long waitBegan = 0;
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
                engine.checkNotClosed("recv");
                if (channel.gone()) {
                    throw channel.failed("recv", inbox.isEmpty() ? null
                            : "; its last message was cut short");
                }
                if (deadline.passed()) {
                    throw new CollectiveTimeoutException("recv", rank, srcRank, (inbox.isEmpty()
                            ? "no message from rank " + srcRank : "the rest of a message from rank " + srcRank
                            + " did not come") + " within the timeout of " + deadline.timeout());
                }
                if (!waited) {
                    waited = true;
                    waitBegan = engine.beginWait();
                    engine.waitingOn = srcRank;
                }
                if (engine.awaitRound(waitStart, deadline, channel, handler) > 0) {
                    waitStart = System.nanoTime();
                }
            }
        } finally {
            inbox.detach(!whole);
            channel.onTaken();
            if (waited) {
                engine.endWait(waitBegan, true);
            }
            engine.exit();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here the handler is attached to {@code srcRank}'s inbox before the send begins and stays
     * attached while the send's waits drive the I/O, so bytes read from that peer meanwhile go to
     * the handler as they arrive rather than into the inbox's storage (over a transport whose bytes
     * live elsewhere, Aeron's term or an in-process sender's buffer, that saves a copy). Whenever
     * the I/O lock may pass to another thread during the send, the inbox is detached, so the
     * handler is called on this thread only. Once the send has returned, the receive goes on as
     * {@link #receive} does, unless the message came whole during the send. The arguments are
     * checked before the handler is attached: a refused send leaves every message where it was.
     * While another thread's call of this method is under way (it let this one have the I/O
     * lock), this one sends first and receives after, as {@link Transport}'s default does.
     */
    @Override
    public final int sendAndReceive(int destRank, ByteBuffer header, ByteBuffer payload, int srcRank,
            MessageHandler handler, Deadline deadline) {
        PeerChannel in = channel("recv", srcRank);
        Objects.requireNonNull(handler, "handler");
        PeerChannel out = channel("send", destRank);
        long length = messageLength(destRank, header, payload);
        int received = -1;
        engine.enter("send", destRank, deadline);
        try {
            if (!engine.post(in, handler)) {
                out.send(Frame.DATA, length, header, payload, deadline, "send");
            } else {
                boolean sent = false;
                try {
                    out.send(Frame.DATA, length, header, payload, deadline, "send");
                    sent = true;
                } finally {
                    received = engine.unpost(!sent);
                }
            }
        } finally {
            engine.exit();
        }
        return received >= 0 ? received : receive(srcRank, handler, deadline);
    }

    @Override
    public final void barrier() {
        barrier(Deadline.after(timeout));
    }

    @Override
    public final void barrier(Deadline deadline) {
        Objects.requireNonNull(deadline, "deadline");
        engine.enter("barrier", CollectiveException.NO_RANK, deadline);
        boolean waited = false;
        long waitBegan = 0;
        try {
            PeerChannel[] channels = engine.channels;
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
                engine.checkNotClosed("barrier");
                if (deadline.passed()) {
                    throw new CollectiveTimeoutException("barrier", rank, missing.get(0), "ranks " + missing
                            + " did not reach the barrier within " + deadline.timeout());
                }
                if (!waited) {
                    waited = true;
                    waitBegan = engine.beginWait();
                }
                if (engine.awaitRound(waitStart, deadline, null, null) > 0) {
                    waitStart = System.nanoTime();
                }
            }
        } finally {
            if (waited) {
                engine.endWait(waitBegan, false);
            }
            engine.exit();
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
            if (engine.closed) {
                return;
            }
            engine.closed = true;
            engine.closing = Thread.currentThread();
            reader = engine.background;
            wasStarted = started;
        }
        CloseSequence.run(this, wasStarted, reader);
    }

    // ---- the TransportProbe contract ----

    @Override
    public final long waitedNanos() {
        return engine.waitedNanos();
    }

    @Override
    public final int waitingOn() {
        return engine.waitingOn;
    }

    /**
     * {@inheritDoc}
     *
     * <p>An in-process peer calls it on its own asking thread ({@link #statusWithoutAsking}), with
     * that thread's I/O lock held, not this one's.
     */
    @Override
    public final void answerStatusWith(LongSupplier status) {
        engine.exchange.answerWith(status);
    }

    @Override
    public final void watchWaits(WaitWatcher watcher) {
        engine.watcher = watcher;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Each query waits at most a second for its peer to take it. After {@link #close()}, asks
     * nobody. Not to be called from a {@link MessageHandler}, which runs inside this transport's I/O.
     */
    @Override
    public final long askStatus() {
        return engine.exchange.ask();
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if {@code peer} is not another rank of this group
     */
    @Override
    public final long statusOf(int peer, long askedAtNanos) {
        TransportChecks.checkPeer("statusOf", rank, worldSize, peer);
        PeerChannel channel = engine.channels[peer];
        return channel == null ? NO_ANSWER : channel.statusSince(askedAtNanos);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Waits at most two seconds for the I/O lock and two for each peer; {@code originRank} is
     * passed on as given. After {@link #close()}, reports nothing.
     */
    @Override
    public final void reportFailure(int originRank) {
        engine.exchange.report(originRank);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A peer that said goodbye before its connection ended did not fail, and failures noticed
     * while this transport closes are not told.
     */
    @Override
    public final void listen(PeerEvents listener) {
        engine.exchange.listen(listener);
    }

    // ---- shared memory ----

    /**
     * The peers this rank exchanges frames with through shared memory in both directions (rings
     * both ways, both switched over), in rank order; empty before the start, for a transport
     * without shared memory, and for peers on the network path. Any thread.
     */
    public final List<Integer> sharedMemoryPeers() {
        List<Integer> peers = new ArrayList<>();
        for (PeerChannel channel : engine.channels) {
            if (channel != null && channel.sharedMemory.writing && channel.sharedMemory.reading) {
                peers.add(channel.peer());
            }
        }
        return peers;
    }

    /** Bytes (frames and messages) this rank wrote into shared-memory rings so far, over every peer. Any thread. */
    public final long sharedMemoryBytesSent() {
        long total = 0;
        for (PeerChannel channel : engine.channels) {
            total += channel == null ? 0 : channel.sharedMemory.bytesWritten();
        }
        return total;
    }

    /** Bytes this rank took out of shared-memory rings so far, over every peer. Any thread. */
    public final long sharedMemoryBytesReceived() {
        long total = 0;
        for (PeerChannel channel : engine.channels) {
            total += channel == null ? 0 : channel.sharedMemory.bytesRead();
        }
        return total;
    }

    // ---- for transports ----

    /**
     * What this rank answers a status query with now: the value of the supplier given to
     * {@link #answerStatusWith}, or {@link #NO_STATUS}. For {@link #statusWithoutAsking}, which may
     * read it of a peer's transport in the same JVM.
     */
    protected final long statusToAnswer() {
        return engine.exchange.statusToAnswer();
    }

    /** The channel to {@code peer}; for transports' own code. */
    protected final PeerChannel channelOf(int peer) {
        return engine.channels[peer];
    }

    /**
     * One round of waiting, for a caller that holds the I/O lock and waits for I/O (a receive, a
     * barrier, or a write held back by its peer): spins, yields or blocks according to how long it
     * has waited since {@code waitStart} (see the class comment), never past {@code deadline}.
     * While it blocks outside the lock, {@code waitingOn}'s inbox is detached from
     * {@code handler}, so no other thread calls it.
     *
     * @return what the round moved (0 for nothing)
     * @throws IllegalStateException if another thread closed the transport meanwhile
     */
    public final int awaitRound(long waitStart, Deadline deadline, PeerChannel waitingOn, MessageHandler handler) {
        // Watched: a send held back by a stopped peer is where a rank may wait longest (over Aeron,
        // a full term buffer), and its stall warning must come as a receive's does.
        return engine.awaitRound(waitStart, deadline, waitingOn, handler);
    }

    /** Fails every peer with {@code reason} (the medium under all of them failed). */
    protected final void failAll(String reason, Throwable cause) {
        engine.failAll(reason, cause);
    }

    /**
     * Takes the I/O lock for work on a thread that is not in a call (set-up, another rank's send),
     * waking the background reader if it has the lock; counts as a call meanwhile, so the reader
     * stays away until {@link #unlockIo}. Blocks until the lock is free.
     */
    protected final void lockIo() {
        engine.lockIo();
    }

    /** Releases {@link #lockIo}. */
    protected final void unlockIo() {
        engine.exit();
    }

    /**
     * Lets go of the calling thread's holds on the I/O lock for a moment (an in-process send, which
     * must take the receiving rank's lock and may not hold its own meanwhile, or two ranks sending
     * to each other would deadlock); give the result to {@link #retakeIo}.
     */
    protected final int releaseIoForAWhile() {
        engine.pausePosted();
        return engine.io.releaseAll();
    }

    /** Takes back the holds {@link #releaseIoForAWhile} let go of; blocks until it has them. */
    protected final void retakeIo(int holds) {
        engine.io.retake(holds);
        engine.resumePosted();
    }

    private PeerChannel channel(String operation, int peer) {
        engine.checkNotClosed(operation);
        TransportChecks.checkPeer(operation, rank, worldSize, peer);
        return engine.channels[peer];
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{rank=" + rank + ", worldSize=" + worldSize + '}';
    }
}
