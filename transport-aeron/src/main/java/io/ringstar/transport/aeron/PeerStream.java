package io.ringstar.transport.aeron;

import io.aeron.DirectBufferVector;
import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.aeron.Publication;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.Header;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PeerFailureException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * This rank's two Aeron streams with one peer: the exclusive publication it sends on and the image
 * it receives from, plus the messages that came in and wait for {@code recv}.
 *
 * <p>Threads: the transport's receiver thread calls {@link #poll}, {@link #acknowledgeGoodbye} and
 * {@link #checkConnected}; callers of the transport call {@link #send}, {@link #receive} and the
 * waits. The poll lock, held by whoever reads the image, guards the inbound queue and the message
 * being read, so the data path takes no other lock. A second lock guards the control state
 * (barrier, ready, goodbye, failure), and its condition wakes whoever waits on it. A send lock
 * keeps the chunks of one message together on the publication. Close takes both the send lock and
 * the poll lock ({@link #lockOutForClose}) before the client unmaps the streams.
 *
 * <p>Memory is bounded on both sides. Outbound, nothing is buffered beyond Aeron's term: a send
 * that finds the publication back-pressured waits with the idle strategy, up to its deadline.
 * Inbound, once {@code receiveBufferBytes} wait for {@code recv}, the receiver stops polling this
 * peer's image, so Aeron's flow control stops the sender in turn; except while this rank is
 * sending to the peer, since two ranks that both send more than the other buffers before they
 * receive would otherwise wait on each other for ever. Then it reads on up to twice
 * {@code receiveBufferBytes}, past which it stops all the same (see {@link #queueFull}). The
 * message being read when a limit is reached is read to its end.
 */
final class PeerStream implements ControlledFragmentHandler {
    private static final int NOTHING_QUEUED = -1;
    private static final int HEAD_INCOMPLETE = -2;
    /** Fragments read per poll of the image. */
    static final int FRAGMENT_LIMIT = 64;
    /** Arrays kept for reuse by later messages of about the same size. */
    private static final int POOLED_ARRAYS = 8;
    private static final byte[] EMPTY = new byte[0];

    private final int rank;
    private final int peer;
    private final int sessionIn;
    private final boolean ipc;
    private final long receiveBufferBytes;
    private final Duration liveness;
    private final ExclusivePublication publication;
    private final int chunkBytes;

    private final ReentrantLock sendLock = new ReentrantLock();
    /** Idles a send under back-pressure; used under the send lock only. */
    private final IdleStrategy sendIdle;
    /** Idles a waiting recv; one caller receives from a peer at a time (the Transport contract). */
    private final IdleStrategy receiveIdle;
    private final BufferClaim claim = new BufferClaim();
    private final UnsafeBuffer headerBytes = new UnsafeBuffer(new byte[ChunkHeader.LENGTH]);
    /** True while a send holds the send lock; read by the receiver thread (see {@link #queueFull}). */
    private volatile boolean sending;
    /**
     * The message being sent, reused by every send so that sending allocates nothing: part 0 is the
     * chunk header, 1 the caller's header, 2 its payload; {@code sendAt} and {@code sendEnd} are
     * positions within each part. Under the send lock; the caller's buffers are let go at the end.
     */
    private final ByteBuffer[] sendParts = new ByteBuffer[3];
    private final int[] sendAt = new int[3];
    private final int[] sendEnd = new int[3];
    /** For {@code offer}: views of the parts, and one vector array per count of parts a chunk spans. */
    private final UnsafeBuffer[] offerViews = {null, new UnsafeBuffer(EMPTY), new UnsafeBuffer(EMPTY)};
    private final DirectBufferVector[][] offerVectors = {
        {new DirectBufferVector()},
        {new DirectBufferVector(), new DirectBufferVector()},
        {new DirectBufferVector(), new DirectBufferVector(), new DirectBufferVector()}};

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Messages waiting for {@code recv}, the arrays kept for reuse and their bytes: under the poll lock. */
    private final ArrayDeque<Inbound> inbound = new ArrayDeque<>();
    private final ArrayDeque<byte[]> pool = new ArrayDeque<>();
    private long queuedBytes;
    private long barrierEpoch;
    private boolean ready;
    /** Written under the lock; volatile because {@link #checkPeer} and {@link #gone} read it without. */
    private volatile boolean peerClosing;
    private boolean goodbyeAcknowledged;
    /**
     * The peer said goodbye and has not been told yet that it arrived. Set under the lock by
     * whoever reads the image (the receiver thread or a recv caller), cleared by the receiver
     * thread in {@link #acknowledgeGoodbye} without it: hence volatile.
     */
    private volatile boolean acknowledgementOwed;
    /**
     * Held by whoever reads the image: the receiver thread (which only tries it) or a caller of
     * {@code recv} that reads for itself. Guards the image, {@link #current} and the direct target.
     * Taken before {@link #lock}, never after it.
     */
    private final ReentrantLock pollLock = new ReentrantLock();
    /** The queued message whose chunks are still coming. Under the poll lock. */
    private Inbound current;
    /**
     * A caller's buffer that the next message goes straight into, skipping the queue, while that
     * caller waits in {@code recv} with nothing queued. Under the poll lock.
     */
    private ByteBuffer directDst;
    private boolean directExact;
    /** Length of the message being written into {@link #directDst}, or -1 before one has started. */
    private int directLength = -1;
    private int directFilled;
    /** The stream lost its framing; nothing more is read from it. Receiver thread only. */
    private boolean broken;
    private volatile Image image;
    /**
     * Whether the publication has been connected since the group began forming; until then an
     * unconnected publication is the rendezvous's to wait for. Receiver thread only.
     */
    private boolean connectedOnce;
    /** Whether {@link #unconnectedSince} holds a time. Receiver thread only. */
    private boolean unconnected;
    /** When the publication was last seen going from connected to unconnected. Receiver thread only. */
    private long unconnectedSince;
    /** Why the peer is gone, or null while it is there. Written under the lock. */
    private volatile String failure;
    private volatile boolean closedHere;

    /** One message, filled by the receiver thread as its chunks come. */
    private static final class Inbound {
        final byte[] bytes;
        final int length;
        int filled;

        Inbound(byte[] bytes, int length) {
            this.bytes = bytes;
            this.length = length;
        }

        boolean complete() {
            return filled == length;
        }
    }

    PeerStream(int rank, int peer, int sessionIn, boolean ipc, ExclusivePublication publication, int chunkBytes,
            long receiveBufferBytes, Duration liveness, IdleStrategy sendIdle, IdleStrategy receiveIdle) {
        this.sendIdle = sendIdle;
        this.receiveIdle = receiveIdle;
        this.rank = rank;
        this.peer = peer;
        this.sessionIn = sessionIn;
        this.ipc = ipc;
        this.publication = publication;
        this.chunkBytes = chunkBytes > 0 ? chunkBytes : publication.maxPayloadLength();
        this.receiveBufferBytes = receiveBufferBytes;
        this.liveness = liveness;
    }

    int peer() {
        return peer;
    }

    int sessionIn() {
        return sessionIn;
    }

    boolean ipc() {
        return ipc;
    }

    boolean hasImage() {
        return image != null;
    }

    void image(Image image) {
        this.image = image;
    }

    boolean publicationConnected() {
        return publication.isConnected();
    }

    /**
     * Receiver thread, every round: fails the peer once the publication to it has stayed
     * unconnected (no subscriber, or no status messages from it) for the liveness timeout, so that
     * a rank that only receives, waits in a barrier or is idle learns it too, not only a send.
     */
    void checkConnected(long now) {
        // After a goodbye the peer's subscription goes away by design: its image's end reports it as closed.
        if (failure != null || closedHere || peerClosing) {
            return;
        }
        if (publication.isConnected()) {
            connectedOnce = true;
            unconnected = false;
        } else if (!connectedOnce) {
            return;
        } else if (!unconnected) {
            unconnected = true;
            unconnectedSince = now;
        } else if (now - unconnectedSince > liveness.toNanos()) {
            fail("the stream to rank " + peer + " stayed unconnected for longer than the liveness timeout of "
                    + liveness.toMillis() + " ms");
        }
    }

    String failure() {
        return failure;
    }

    // ---- receiver thread ----

    /** Reads what the peer sent, unless {@code recv} has fallen too far behind. */
    int poll(int fragmentLimit) {
        if (!pollLock.tryLock()) {
            return 0;
        }
        try {
            return pollLocked(fragmentLimit);
        } finally {
            pollLock.unlock();
        }
    }

    private int pollLocked(int fragmentLimit) {
        Image source = image;
        if (source == null || broken) {
            return 0;
        }
        if (directLength >= 0 && directFilled == directLength) {
            // A caller's message is complete in its buffer; what follows waits until it has taken it.
            return 0;
        }
        if (current == null && directLength < 0 && queueFull()) {
            return 0;
        }
        return source.controlledPoll(this, fragmentLimit);
    }

    @Override
    public Action onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        if (directLength >= 0) {
            int take = Math.min(length, directLength - directFilled);
            buffer.getBytes(offset, directDst, directDst.position() + directFilled, take);
            directFilled += take;
            if (take < length) {
                fail("rank " + peer + " sent " + (length - take) + " bytes past the end of a message");
            }
            return directFilled == directLength ? Action.BREAK : Action.CONTINUE;
        }
        Inbound message = current;
        if (message != null) {
            int take = Math.min(length, message.length - message.filled);
            buffer.getBytes(offset, message.bytes, message.filled, take);
            message.filled += take;
            if (message.complete()) {
                current = null;
            }
            if (take < length) {
                fail("rank " + peer + " sent " + (length - take) + " bytes past the end of a message");
            }
            return Action.CONTINUE;
        }
        if (!ChunkHeader.hasMagic(buffer, offset, length)) {
            broken = true;
            fail("rank " + peer + " sent a chunk without a header (" + length + " bytes): the stream lost its framing");
            return Action.BREAK;
        }
        int kind = ChunkHeader.kind(buffer, offset);
        long value = ChunkHeader.value(buffer, offset);
        if (kind == ChunkHeader.DATA) {
            if (value < 0 || value > Integer.MAX_VALUE - 8) {
                broken = true;
                fail("rank " + peer + " announced a message of " + value + " bytes");
                return Action.BREAK;
            }
            if (queueFull()) {
                // Leave it in the term: Aeron's flow control then holds the sender back.
                return Action.ABORT;
            }
            int messageLength = (int) value;
            // Straight to a waiting caller only when nothing is queued before it: messages stay in order.
            if (directDst != null && inbound.isEmpty() && (directExact ? messageLength == directDst.remaining()
                    : messageLength <= directDst.remaining())) {
                // The caller waits for exactly this message: into its buffer, not through the queue.
                int take = Math.min(length - ChunkHeader.LENGTH, messageLength);
                buffer.getBytes(offset + ChunkHeader.LENGTH, directDst, directDst.position(), take);
                directLength = messageLength;
                directFilled = take;
                if (take < length - ChunkHeader.LENGTH) {
                    fail("rank " + peer + " sent " + (length - ChunkHeader.LENGTH - take)
                            + " bytes past the end of a message");
                }
                return directFilled == directLength ? Action.BREAK : Action.CONTINUE;
            }
            onMessageStart(buffer, offset + ChunkHeader.LENGTH, length - ChunkHeader.LENGTH, messageLength);
            return Action.CONTINUE;
        }
        lock.lock();
        try {
            switch (kind) {
                case ChunkHeader.BARRIER -> barrierEpoch = Math.max(barrierEpoch, value);
                case ChunkHeader.READY -> ready = true;
                case ChunkHeader.GOODBYE -> {
                    peerClosing = true;
                    acknowledgementOwed = true;
                }
                case ChunkHeader.GOODBYE_ACK -> goodbyeAcknowledged = true;
                default -> failLocked("rank " + peer + " sent an unknown record, " + ChunkHeader.kindName(kind));
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        return Action.CONTINUE;
    }

    private void onMessageStart(DirectBuffer buffer, int offset, int available, int messageLength) {
        byte[] bytes = borrow(messageLength);
        Inbound message = new Inbound(bytes, messageLength);
        int take = Math.min(available, messageLength);
        buffer.getBytes(offset, bytes, 0, take);
        message.filled = take;
        inbound.addLast(message);
        queuedBytes += messageLength;
        current = message.complete() ? null : message;
        if (take < available) {
            fail("rank " + peer + " sent " + (available - take) + " bytes past the end of a message");
        }
    }

    /**
     * Whether the next message must stay in the term: once {@code receiveBufferBytes} wait for
     * {@code recv}; while this rank is itself sending to the peer, only at twice that, so that two
     * ranks that both send before they receive do not hold each other back, yet memory stays bounded.
     * A message already begun is always read to its end (the stream must not stall mid-message).
     */
    private boolean queueFull() {
        return queuedBytes >= (sending ? 2 * receiveBufferBytes : receiveBufferBytes);
    }

    /** Tells the peer that its goodbye arrived, when the publication is free; never waits. */
    void acknowledgeGoodbye() {
        if (!acknowledgementOwed || failure != null || !sendLock.tryLock()) {
            return;
        }
        try {
            if (publication.tryClaim(ChunkHeader.LENGTH, claim) > 0) {
                ChunkHeader.write(claim.buffer(), claim.offset(), ChunkHeader.GOODBYE_ACK, 0);
                claim.commit();
                acknowledgementOwed = false;
            }
        } finally {
            sendLock.unlock();
        }
    }

    /** The peer's image went away: the peer closed, died, or was unreachable for the liveness timeout. */
    void onImageGone() {
        lock.lock();
        try {
            failLocked(peerClosing ? "rank " + peer + " closed its transport"
                    : "rank " + peer + "'s stream went away (its process or media driver stopped, or it was unreachable"
                    + " for longer than the liveness timeout of " + liveness.toMillis() + " ms)");
        } finally {
            lock.unlock();
        }
    }

    void fail(String reason) {
        lock.lock();
        try {
            failLocked(reason);
        } finally {
            lock.unlock();
        }
    }

    private void failLocked(String reason) {
        if (failure == null) {
            failure = reason;
        }
        changed.signalAll();
    }

    /** This rank closes: whoever waits on this peer learns that, not of a failed peer. */
    void closeHere() {
        lock.lock();
        try {
            closedHere = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    // ---- callers ----

    /**
     * Sends {@code header} and {@code payload} as one message, chunk by chunk: straight into the
     * term with {@code tryClaim} where a chunk fits one frame, with {@code offer} (which Aeron
     * fragments) otherwise. Waits with the idle strategy while back-pressured, until {@code deadline}.
     */
    void send(ByteBuffer header, ByteBuffer payload, long deadline, Duration timeout) {
        long length = (long) header.remaining() + payload.remaining();
        if (length > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("send on rank " + rank + ": a message of " + length + " bytes to rank "
                    + peer + " is longer than the transport carries");
        }
        lockForSending("send", deadline, timeout);
        sending = true;
        try {
            checkPeer("send");
            ByteBuffer[] parts = sendParts;
            int[] at = sendAt;
            int[] end = sendEnd;
            parts[1] = header;
            parts[2] = payload;
            at[0] = 0;
            at[1] = header.position();
            at[2] = payload.position();
            end[0] = ChunkHeader.LENGTH;
            end[1] = header.limit();
            end[2] = payload.limit();
            offerViews[0] = headerBytes;
            ChunkHeader.write(headerBytes, 0, ChunkHeader.DATA, length);
            long total = ChunkHeader.LENGTH + length;
            long left = total;
            int part = 0;
            try {
                while (left > 0) {
                    int chunk = (int) Math.min(left, chunkBytes);
                    if (chunk <= publication.maxPayloadLength()) {
                        part = claimChunk(chunk, parts, at, end, part, deadline, timeout);
                    } else {
                        part = offerChunk(chunk, parts, at, end, part, deadline, timeout);
                    }
                    left -= chunk;
                }
            } catch (RuntimeException | Error e) {
                if (left < total) {
                    // Only the first chunk carries the header and the peer joins the rest by count: whatever
                    // went next on this stream would be read as the rest of this message. The stream is lost.
                    fail("a message to rank " + peer + " was cut short after " + (total - left - ChunkHeader.LENGTH)
                            + " of " + length + " bytes: " + (e.getMessage() != null ? e.getMessage() : e));
                }
                throw e;
            }
        } finally {
            // The caller owns its buffers again: keep no reference to them.
            sendParts[1] = null;
            sendParts[2] = null;
            offerViews[1].wrap(EMPTY);
            offerViews[2].wrap(EMPTY);
            sending = false;
            sendLock.unlock();
        }
    }

    /**
     * Writes the next {@code chunk} bytes of the parts straight into the term, advancing {@code at}.
     * A claim that cannot be filled is aborted, so Aeron skips it instead of stalling the stream.
     *
     * @return the part the next chunk starts in
     */
    private int claimChunk(int chunk, ByteBuffer[] parts, int[] at, int[] end, int firstPart, long deadline,
            Duration timeout) {
        sendIdle.reset();
        long result;
        while ((result = publication.tryClaim(chunk, claim)) <= 0) {
            backOff("send", false, result, deadline, timeout, sendIdle);
        }
        int part = firstPart;
        try {
            int written = 0;
            while (written < chunk) {
                while (at[part] == end[part]) {
                    part++;
                }
                int n = Math.min(chunk - written, end[part] - at[part]);
                if (part == 0) {
                    claim.buffer().putBytes(claim.offset() + written, headerBytes, at[0], n);
                } else {
                    claim.buffer().putBytes(claim.offset() + written, parts[part], at[part], n);
                }
                at[part] += n;
                written += n;
            }
        } catch (RuntimeException | Error e) {
            claim.abort();
            throw e;
        }
        claim.commit();
        return part;
    }

    /**
     * Hands the next {@code chunk} bytes of the parts to {@code offer}, which fragments them into
     * frames, advancing {@code at}.
     *
     * @return the part the next chunk starts in
     */
    private int offerChunk(int chunk, ByteBuffer[] parts, int[] at, int[] end, int firstPart, long deadline,
            Duration timeout) {
        // How many parts this chunk spans decides which vector array goes to offer (it takes the whole array).
        int count = 0;
        int gathered = 0;
        for (int p = firstPart; gathered < chunk; p++) {
            if (at[p] < end[p]) {
                gathered += Math.min(chunk - gathered, end[p] - at[p]);
                count++;
            }
        }
        DirectBufferVector[] vectors = offerVectors[count - 1];
        int used = 0;
        gathered = 0;
        int p = firstPart;
        while (gathered < chunk) {
            while (at[p] == end[p]) {
                p++;
            }
            int n = Math.min(chunk - gathered, end[p] - at[p]);
            if (p > 0 && offerViews[p].byteBuffer() != parts[p]) {
                offerViews[p].wrap(parts[p]);
            }
            vectors[used++].reset(offerViews[p], at[p], n);
            at[p] += n;
            gathered += n;
        }
        sendIdle.reset();
        long result;
        while ((result = publication.offer(vectors)) <= 0) {
            backOff("send", false, result, deadline, timeout, sendIdle);
        }
        return p;
    }

    /**
     * Sends a record that is a header alone (barrier, ready, goodbye). A goodbye goes out from
     * {@code close}, after this rank has closed and whatever the peer's state.
     */
    void sendRecord(String operation, int kind, long value, long deadline, Duration timeout) {
        boolean goodbye = kind == ChunkHeader.GOODBYE;
        lockForSending(operation, deadline, timeout);
        try {
            if (!goodbye) {
                checkPeer(operation);
            }
            sendIdle.reset();
            long result;
            while ((result = publication.tryClaim(ChunkHeader.LENGTH, claim)) <= 0) {
                backOff(operation, goodbye, result, deadline, timeout, sendIdle);
            }
            ChunkHeader.write(claim.buffer(), claim.offset(), kind, value);
            claim.commit();
        } finally {
            sendLock.unlock();
        }
    }

    private void lockForSending(String operation, long deadline, Duration timeout) {
        try {
            if (!sendLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new CollectiveTimeoutException(operation, rank, peer, "another send to rank " + peer
                        + " held the stream for longer than the timeout of " + timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException(operation, rank, peer, "interrupted", e);
        }
    }

    /**
     * After Aeron refused a claim or offer with {@code result}: throws if this rank closed, the
     * peer failed, the stream was closed under this rank, or the deadline passed; otherwise idles
     * once. An unconnected stream needs nothing here: {@link #checkConnected} fails the peer once
     * it has stayed so for the liveness timeout, and the next round throws that failure.
     */
    private void backOff(String operation, boolean closing, long result, long deadline, Duration timeout,
            IdleStrategy idle) {
        // What this rank already knows explains a refusal better than the refusal itself.
        if (closedHere && !closing) {
            throw new CollectiveException(operation, rank, peer, "this rank closed its transport");
        }
        String known = failure;
        if (known != null) {
            throw new PeerFailureException(operation, rank, peer, known);
        }
        if (result == Publication.CLOSED) {
            // This rank has not closed (checked above), so its Aeron client or media driver went away under it.
            failAndThrow(operation, "the stream to rank " + peer + " was closed under this rank (its Aeron client or"
                    + " media driver stopped)");
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            failAndThrow(operation, "the stream to rank " + peer + " reached Aeron's maximum position");
        }
        if (System.nanoTime() - deadline >= 0) {
            String why = result == Publication.NOT_CONNECTED ? "the stream to it is not connected"
                    : "back-pressure: it is not receiving";
            throw new CollectiveTimeoutException(operation, rank, peer, "rank " + peer + " did not take the data"
                    + " within the timeout of " + timeout + " (" + why + ")");
        }
        idle.idle();
    }

    /** Records {@code reason} as the peer's failure (unless one came first) and throws that failure. */
    private void failAndThrow(String operation, String reason) {
        fail(reason);
        throw new PeerFailureException(operation, rank, peer, failure);
    }

    private void checkPeer(String operation) {
        String reason = failure;
        if (reason != null) {
            throw new PeerFailureException(operation, rank, peer, reason);
        }
        if (peerClosing) {
            throw new PeerFailureException(operation, rank, peer, "rank " + peer + " closed its transport");
        }
    }

    /**
     * Copies the next message into {@code dst}, waiting until {@code deadline} for it. A message
     * already queued is copied out; otherwise the caller reads the image itself (taking turns with
     * the receiver thread) and the message goes straight into {@code dst}, with no queue and no
     * thread hand-off between. Between attempts it waits with the idle strategy.
     *
     * @param exact true for {@code recv} (the length must be {@code dst.remaining()}), false for {@code recvAtMost}
     * @return the message length
     */
    int receive(ByteBuffer dst, boolean exact, long deadline, Duration timeout) {
        IdleStrategy idle = receiveIdle;
        idle.reset();
        // The receiver thread holds this lock for one poll and close for at most its lock-out (about a
        // second), so waiting to the deadline is generous; nothing is set up yet if it runs out.
        try {
            if (!pollLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new CollectiveTimeoutException("recv", rank, peer, "the stream from rank " + peer
                        + " stayed locked for longer than the timeout of " + timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException("recv", rank, peer, "interrupted", e);
        }
        try {
            while (true) {
                int work = 0;
                if (directLength < 0) {
                    int queued = takeQueued(dst, exact);
                    if (queued >= 0) {
                        return queued;
                    }
                    if (queued == NOTHING_QUEUED) {
                        directDst = dst;
                        directExact = exact;
                    }
                    work = pollLocked(FRAGMENT_LIMIT);
                }
                if (directLength >= 0) {
                    if (directFilled == directLength) {
                        int length = directLength;
                        clearDirect();
                        dst.position(dst.position() + length);
                        return length;
                    }
                    work += pollLocked(FRAGMENT_LIMIT);
                    if (directFilled == directLength) {
                        continue;
                    }
                    if (failure != null) {
                        int filled = directFilled;
                        int length = directLength;
                        clearDirect();
                        throw new PeerFailureException("recv", rank, peer, failure + "; its message of " + length
                                + " bytes was cut short after " + filled);
                    }
                }
                if (closedHere) {
                    throw new CollectiveException("recv", rank, peer, "this rank closed its transport");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new CollectiveTimeoutException("recv", rank, peer, "no message from rank " + peer
                            + " within the timeout of " + timeout);
                }
                // Let the receiver thread read (and keep this peer's stream moving) while this caller idles.
                // Taking the lock back is not bounded by the deadline: a direct read may be under way
                // into dst, which must not be left to the receiver thread; it holds the lock for one poll.
                pollLock.unlock();
                try {
                    idle.idle(work);
                } finally {
                    pollLock.lock();
                }
            }
        } finally {
            if (directLength >= 0 && directFilled < directLength) {
                queuePartialDirect();
            }
            clearDirect();
            pollLock.unlock();
        }
    }

    /**
     * Takes the head of the queue if complete: its length, or {@link #NOTHING_QUEUED}, or
     * {@link #HEAD_INCOMPLETE} while its chunks are still coming. Holds the poll lock.
     */
    private int takeQueued(ByteBuffer dst, boolean exact) {
        if (closedHere) {
            throw new CollectiveException("recv", rank, peer, "this rank closed its transport");
        }
        Inbound head = inbound.peekFirst();
        if (head != null) {
            if (exact ? head.length != dst.remaining() : head.length > dst.remaining()) {
                throw new CollectiveMismatchException("recv", rank, peer, "the next message from rank " + peer
                        + " is " + head.length + " bytes, the buffer takes " + (exact ? "exactly " : "at most ")
                        + dst.remaining());
            }
            if (head.complete()) {
                inbound.pollFirst();
                queuedBytes -= head.length;
                dst.put(head.bytes, 0, head.length);
                giveBack(head.bytes);
                return head.length;
            }
            if (failure != null) {
                throw new PeerFailureException("recv", rank, peer, failure + "; its message of " + head.length
                        + " bytes was cut short after " + head.filled);
            }
            return HEAD_INCOMPLETE;
        } else if (failure != null) {
            throw new PeerFailureException("recv", rank, peer, failure);
        } else if (peerClosing) {
            throw new PeerFailureException("recv", rank, peer, "rank " + peer + " closed its transport");
        }
        return NOTHING_QUEUED;
    }


    /**
     * The caller leaves (timeout, failure) while its message is half in its buffer: the half moves
     * to the queue, where the rest of the message follows. Holds the poll lock.
     */
    private void queuePartialDirect() {
        byte[] bytes = borrow(directLength);
        directDst.get(directDst.position(), bytes, 0, directFilled);
        Inbound message = new Inbound(bytes, directLength);
        message.filled = directFilled;
        inbound.addFirst(message);
        queuedBytes += directLength;
        current = message;
    }

    private void clearDirect() {
        directDst = null;
        directLength = -1;
        directFilled = 0;
    }

    /** True once the peer has reached barrier {@code epoch}; false at the deadline. */
    boolean awaitBarrier(long epoch, long deadline) {
        lock.lock();
        try {
            while (barrierEpoch < epoch) {
                if (closedHere) {
                    throw new CollectiveException("barrier", rank, peer, "this rank closed its transport");
                }
                if (failure != null || peerClosing) {
                    throw new PeerFailureException("barrier", rank, peer, failure != null ? failure
                            : "rank " + peer + " closed its transport");
                }
                if (!waitUntil("barrier", deadline)) {
                    return false;
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** True once the peer said it sees the whole group; false at the deadline or if it failed. */
    boolean awaitReady(long deadline) {
        lock.lock();
        try {
            while (!ready && failure == null && !closedHere) {
                if (!waitUntil("rendezvous", deadline)) {
                    return false;
                }
            }
            return ready;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until the peer acknowledged this rank's goodbye or is gone; false at the deadline. */
    boolean awaitGoodbyeAcknowledged(long deadline) {
        lock.lock();
        try {
            while (!goodbyeAcknowledged && failure == null) {
                if (!waitUntil("close", deadline)) {
                    return false;
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    boolean gone() {
        return failure != null || peerClosing;
    }

    /** Waits on the condition until {@code deadline}; false once it has passed. Holds the lock. */
    private boolean waitUntil(String operation, long deadline) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        try {
            changed.awaitNanos(left);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException(operation, rank, peer, "interrupted while waiting", e);
        }
        return true;
    }

    /** An array of at least {@code length} bytes, reused from an earlier message where one fits. Holds the poll lock. */
    private byte[] borrow(int length) {
        if (length == 0) {
            return EMPTY;
        }
        for (java.util.Iterator<byte[]> it = pool.iterator(); it.hasNext();) {
            byte[] candidate = it.next();
            if (candidate.length >= length && candidate.length / 2 <= length) {
                it.remove();
                return candidate;
            }
        }
        return new byte[length];
    }

    private void giveBack(byte[] bytes) {
        if (bytes.length == 0) {
            return;
        }
        if (pool.size() == POOLED_ARRAYS) {
            pool.pollFirst();
        }
        pool.addLast(bytes);
    }

    /**
     * For close, after {@link #closeHere}: takes the poll lock and the send lock, waiting at most
     * until {@code deadline}, so that no recv caller is inside the image and no sender inside a
     * claim or offer when the Aeron client unmaps them. Callers already inside leave at their
     * next check of {@code closedHere}. Release with {@link #unlockAfterClose} whatever this returns.
     *
     * @return true if both locks are held, false if a thread may still be inside
     */
    boolean lockOutForClose(long deadline) {
        try {
            return pollLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
                    && sendLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Releases what {@link #lockOutForClose} took, once the client is closed. */
    void unlockAfterClose() {
        if (sendLock.isHeldByCurrentThread()) {
            sendLock.unlock();
        }
        if (pollLock.isHeldByCurrentThread()) {
            pollLock.unlock();
        }
    }

    /** Drops the queued messages and pooled arrays, after the receiver thread has stopped. */
    void release() {
        lock.lock();
        try {
            inbound.clear();
            pool.clear();
            queuedBytes = 0;
        } finally {
            lock.unlock();
        }
    }
}
