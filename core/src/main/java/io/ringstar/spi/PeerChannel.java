package io.ringstar.spi;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import java.nio.ByteBuffer;

/**
 * This rank's link with one peer inside a {@link PeerTransport}: the state every transport keeps
 * the same way (the {@link Inbox} of what came in, the barrier epoch the peer reached, whether it
 * said goodbye, the first failure), and the I/O the transport supplies by extending this class:
 * {@link #writeFrame} and {@link #closeChannel}.
 *
 * <p>Threads: the inbox, the barrier epoch and a status reply owed to the peer are touched only by
 * the holder of the transport's I/O lock; the failure, the goodbye and the peer's last status reply
 * are volatile, set by whoever notices and read by anyone.
 */
public abstract class PeerChannel implements Inbox.Listener {
    protected final PeerTransport transport;
    protected final int rank;
    protected final int peer;
    final Inbox inbox;
    /** The rings to and from the peer when it shares this host's memory, and their negotiation. */
    final SharedMemoryLink sharedMemory = new SharedMemoryLink(this);
    /** The first reason the peer counts as gone, or null while it is there. */
    private volatile String failure;
    private volatile Throwable failureCause;
    /** The peer said goodbye: nothing follows what it sent before. */
    private volatile boolean peerClosed;
    /** The last barrier epoch the peer reached. Under the I/O lock. */
    private long barrierEpoch;
    /** True while a caller sends to this peer: its inbox may then hold twice as much (see {@link Inbox}). */
    private volatile boolean sending;
    /** What {@link #writeFrame} is writing for, named by its exceptions. */
    private String writing = "send";
    /** The thread that waits for this peer while parked outside the I/O lock, for {@link #wakeWaiter}. */
    volatile Thread waiter;
    /** The peer asked for this rank's status and has no answer yet. Under the I/O lock. */
    boolean replyOwed;
    /** The peer's last status reply ({@link TransportProbe#NO_ANSWER} before one); written before {@link #statusAt}. */
    private volatile long status = TransportProbe.NO_ANSWER;
    /** When {@link #status} arrived, by {@link System#nanoTime()}. */
    private volatile long statusAt;

    /**
     * @param initialInboxBytes the inbox storage's first size
     * @param receiveBufferBytes bytes from the peer that may wait to be received before reading
     *     from it stops (twice that while this rank sends to it)
     */
    protected PeerChannel(PeerTransport transport, int peer, int initialInboxBytes, long receiveBufferBytes) {
        this.transport = transport;
        this.rank = transport.rank();
        this.peer = peer;
        this.inbox = new Inbox(this, initialInboxBytes, receiveBufferBytes);
    }

    public final int peer() {
        return peer;
    }

    // ---- what the transport supplies ----

    /**
     * Writes one frame: a {@link Frame} header of {@code type} and {@code value}, and for
     * {@link Frame#DATA} then the bytes of {@code header} and {@code payload} (position to limit,
     * left unchanged), in one write where the medium allows. Returns once every byte is handed to
     * the medium (socket, term buffer, peer's inbox): never keeps a reference to the buffers. While
     * the peer holds back, waits with {@link PeerTransport#awaitRound}, which keeps every peer's
     * bytes moving, at most until {@code deadline}. Called with the I/O lock held, one frame at a
     * time per channel.
     *
     * <p>If it has to give up after part of a frame went out, the stream is lost: it fails this
     * channel (what followed would be read as the rest of the frame) before it throws.
     *
     * @throws CollectiveTimeoutException at the deadline
     * @throws PeerFailureException if the medium failed
     */
    protected abstract void writeFrame(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline);

    /** Releases what the channel holds (its socket, its publication); called once, by close, last. */
    protected abstract void closeChannel();

    /**
     * A record of a type from {@link Frame#FIRST_TRANSPORT_TYPE} up, for the transport's own use
     * (Aeron's ready and goodbye acknowledgement). Called under the I/O lock. By default such a
     * record breaks the protocol and fails the peer.
     */
    protected void onTransportRecord(int type, long value) {
        fail("rank " + peer + " sent an unknown record, " + Frame.typeName(type), null);
    }

    /** The peer's goodbye was just read (under the I/O lock). Default: nothing. */
    protected void onGoodbye() {
    }

    /**
     * A receive from this peer just took bytes out of the inbox (or gave up): room was made. For a
     * transport whose senders wait for room in this rank's inboxes. Called under the I/O lock.
     * Default: nothing.
     */
    protected void onTaken() {
    }

    // ---- state, for the transport's I/O code ----

    /**
     * The network stream from the peer ended (or its medium failed): call before deciding whether
     * the peer closed or was lost. Takes what is left in the peer's shared-memory ring, if it has
     * one, so that a goodbye waiting there is seen: a peer that closed cleanly said goodbye through
     * the ring and then closed its socket. Called under the I/O lock; nothing without a ring.
     */
    protected final void networkEnded() {
        sharedMemory.drain();
    }

    /**
     * For a record a transport writes from inside its I/O, where it must not wait (Aeron's goodbye
     * acknowledgement): once frames to the peer go through shared memory, the record must go there
     * too, or it could overtake them. Writes the record into the ring if no frame is being written
     * there and it has room.
     *
     * @return true if it wrote it; false if it could not now (try again later) or if frames to the
     *     peer do not go through shared memory ({@link #writesToSharedMemory}: then the transport
     *     writes it to its own medium)
     */
    protected final boolean tryRecordToSharedMemory(int type, long value) {
        return sharedMemory.writing && sharedMemory.tryRecord(type, value);
    }

    /** Whether frames to the peer go through shared memory (the negotiation chose it and the switch went out). */
    public final boolean writesToSharedMemory() {
        return sharedMemory.writing;
    }

    /** Whether frames from the peer come through shared memory (its switch record arrived). */
    public final boolean readsFromSharedMemory() {
        return sharedMemory.reading;
    }

    /**
     * Marks the peer gone; the first reason wins. Waiting and later calls fail with it. The first
     * failure is also told to the transport's {@link TransportProbe.PeerEvents}, unless the peer said
     * goodbye first (its stream ending after that is no failure) or this transport is closing.
     */
    public final void fail(String reason, Throwable cause) {
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failureCause = cause;
            failure = reason;
        }
        ProgressEngine engine = transport.engine;
        engine.wakeAll();
        if (!peerClosed && !engine.closed) {
            engine.exchange.peerFailed(peer, reason);
        }
    }

    /** Why the peer is gone, or null while it is there. */
    public final String failure() {
        return failure;
    }

    /** True once the peer said goodbye or failed. */
    public final boolean gone() {
        return failure != null || peerClosed;
    }

    /** True once the peer said goodbye. */
    public final boolean peerClosed() {
        return peerClosed;
    }

    /** Whether a caller is sending to this peer right now. */
    public final boolean sending() {
        return sending;
    }

    /** The inbox; for the transport's I/O code, under the I/O lock. */
    public final Inbox inbox() {
        return inbox;
    }

    /** Unparks the thread that waits for this peer outside the I/O lock, if any. */
    public final void wakeWaiter() {
        Thread parked = waiter;
        if (parked != null) {
            java.util.concurrent.locks.LockSupport.unpark(parked);
        }
    }

    @Override
    public final void onRecord(int type, long value) {
        switch (type) {
            case Frame.BARRIER -> {
                if (value != barrierEpoch + 1) {
                    fail("rank " + peer + " sent barrier epoch " + value + " where " + (barrierEpoch + 1) + " was due",
                            null);
                    return;
                }
                barrierEpoch = value;
            }
            case Frame.GOODBYE -> {
                peerClosed = true;
                onGoodbye();
            }
            case Frame.STATUS_QUERY -> {
                // Answered at the next safe point, not here: this is inside progress, where a write
                // could nest into the frame another caller is writing.
                replyOwed = true;
                transport.engine.repliesOwed = true;
            }
            case Frame.STATUS_REPLY -> storeStatus(value, System.nanoTime());
            case Frame.FAILURE_REPORT -> transport.engine.exchange.failureReported(peer, (int) value);
            case Frame.SHM_OFFER, Frame.SHM_NONE, Frame.SHM_ANSWER, Frame.SHM_SWITCH ->
                    SharedMemoryNegotiation.onRecord(this, type, value);
            default -> {
                if (type >= Frame.FIRST_TRANSPORT_TYPE) {
                    onTransportRecord(type, value);
                } else {
                    fail("rank " + peer + " sent an unknown record, " + Frame.typeName(type), null);
                }
            }
        }
    }

    @Override
    public final void onMalformed(String what) {
        fail("rank " + peer + " " + what + "; nothing more is read from it", null);
    }

    // ---- used by the skeleton ----

    final long barrierEpoch() {
        return barrierEpoch;
    }

    /** Keeps {@code value} as the peer's status, answered at {@code arrivedAt} ({@link System#nanoTime()}). */
    final void storeStatus(long value, long arrivedAt) {
        // The value first: a reader that sees the new time then reads this value or a later one.
        status = value;
        statusAt = arrivedAt;
    }

    /** The peer's last status if it arrived at or after {@code askedAt}, else {@link TransportProbe#NO_ANSWER}. */
    final long statusSince(long askedAt) {
        long at = statusAt;
        long value = status;
        return at - askedAt >= 0 ? value : TransportProbe.NO_ANSWER;
    }

    final void send(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline, String operation) {
        if (sharedMemory.peerClosedItsRing()) {
            // Its goodbye is in the ring: seen now, so the send fails as it would on the network.
            sharedMemory.drain();
        }
        throwIfGone(operation);
        sending = true;
        writing = operation;
        try {
            if (sharedMemory.writing) {
                sharedMemory.writeFrame(type, value, header, payload, deadline);
            } else {
                writeFrame(type, value, header, payload, deadline);
            }
        } finally {
            sending = false;
            writing = "send";
        }
    }

    /**
     * The operation the frame being written belongs to ({@code send}, {@code barrier},
     * {@code close}), for the exceptions {@link #writeFrame} throws to name.
     */
    protected final String writing() {
        return writing;
    }

    /** Throws the peer's failure, or its goodbye, as a {@link PeerFailureException}. */
    final void throwIfGone(String operation) {
        if (failure != null || peerClosed) {
            throw failed(operation, null);
        }
    }

    /** A {@link PeerFailureException} for a call that found the peer failed. */
    final PeerFailureException failed(String operation, String detail) {
        String reason = failure != null ? failure : "rank " + peer + " closed its transport";
        return new PeerFailureException(operation, rank, peer, detail == null ? reason : reason + detail, failureCause);
    }
}
