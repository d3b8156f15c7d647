package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
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

/**
 * This rank's connection to one peer: the messages that came in and wait for {@code recv}, the
 * barrier epochs the peer has reached, and whether the peer is still there.
 *
 * <p>Threads: the event loop calls the {@code on...} methods; callers of the transport call
 * {@link #send}, {@link #receive} and the barrier methods. One lock guards the inbound queue and
 * the state, and one condition wakes whoever waits on any change.
 *
 * <p>Memory is bounded on both sides. Outbound, Netty's write-buffer watermarks make the
 * channel unwritable and {@link #send} waits (up to its deadline) for it to drain. Inbound, once
 * more than {@link #pauseReadingBytes} bytes wait for {@code recv}, the event loop stops reading
 * this connection, TCP's window closes, and the peer's sends wait in turn.
 */
final class PeerLink {
    /** Messages at most this long are copied into one buffer and sent without waiting for the socket. */
    static final int COPY_THRESHOLD_BYTES = 64 << 10;
    /** How long a failed zero-copy send waits for the closed connection to give the caller's memory back. */
    static final long CLOSE_WAIT_MILLIS = 10_000;
    /** What a queued message costs beyond its bytes, counted against the receive buffer. */
    static final int MESSAGE_OVERHEAD_BYTES = 64;
    /** A caller copying a long message out is woken once this many more of its bytes have come. */
    static final int WAKE_BATCH_BYTES = 256 << 10;
    /** The longest message header that is copied next to the first frame header; longer ones take the copy path. */
    private static final int SMALL_HEADER_BYTES = 4096;

    private final int rank;
    private final int peer;
    private final long pauseReadingBytes;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<Inbound> inbound = new ArrayDeque<>();
    private long queuedBytes;
    private boolean readingPaused;
    private long barrierEpoch;
    private volatile Channel channel;
    /** Why the peer is gone, or null while it is there. Written under the lock, read without it too. */
    private volatile String failure;
    private Throwable failureCause;
    private boolean peerClosing;
    /** Bytes of the newest message that have not arrived yet. */
    private long tailMissing;
    /** The message a caller is copying out and waits on, and how many of its bytes are worth waking it for. */
    private Inbound awaited;
    private long awaitedBytes;
    /**
     * True while a caller sends to this peer. Reading from the peer does not pause then: if both
     * ranks sent each other more than the other buffers and stopped reading, each send would wait
     * for the other's recv, which comes only after its own send. So a rank reads on while it sends,
     * and the receive buffer may exceed its bound by what the peer sends meanwhile.
     */
    private boolean sending;
    /** Set when this rank closed the transport: waiting callers then learn that, not of a failed peer. */
    private volatile boolean closedHere;

    PeerLink(int rank, int peer, long pauseReadingBytes) {
        this.rank = rank;
        this.peer = peer;
        this.pauseReadingBytes = pauseReadingBytes;
    }

    int peer() {
        return peer;
    }

    /** Attaches the connection once its handshake is done; from then on the link carries frames. */
    void attach(Channel connected) {
        lock.lock();
        try {
            this.channel = connected;
            signalChange();
        } finally {
            lock.unlock();
        }
        // Whatever handler the connection has by then, its end fails the link.
        connected.closeFuture().addListener(closed -> onDisconnected());
    }

    boolean isAttached() {
        return channel != null;
    }

    Channel channel() {
        return channel;
    }

    // ---- event loop side ----

    void onMessageStart(int length) {
        boolean pause;
        lock.lock();
        try {
            inbound.addLast(new Inbound(length));
            tailMissing = length;
            // Empty messages cost memory too; counting them keeps a flood of them bounded.
            pause = countQueued(MESSAGE_OVERHEAD_BYTES);
            signalChange();
        } finally {
            lock.unlock();
        }
        if (pause) {
            channel.config().setAutoRead(false);
        }
    }

    /** Adds to the bytes waiting for recv; true if reading must pause now. Called with the lock held. */
    private boolean countQueued(long bytes) {
        queuedBytes += bytes;
        if (!readingPaused && !sending && queuedBytes > pauseReadingBytes) {
            readingPaused = true;
            return true;
        }
        return false;
    }

    void onPayload(ByteBuf part) {
        boolean pause = false;
        lock.lock();
        try {
            Inbound last = inbound.peekLast();
            if (last == null || failure != null) {
                part.release();
                return;
            }
            last.parts.addLast(part);
            last.available += part.readableBytes();
            tailMissing -= part.readableBytes();
            pause = countQueued(part.readableBytes());
            // A caller copying this message out is woken for a batch of bytes, not for every read:
            // on 2 cores the ring at 1 MiB ran 1.14-1.45 ms a call with batches against 1.55-1.71 ms
            // with a wake-up per read (2 processes, 3 runs each).
            if (last != awaited || last.available >= awaitedBytes || pause) {
                signalChange();
            }
        } finally {
            lock.unlock();
        }
        if (pause) {
            // Called on the event loop, so this takes effect before any resume that recv schedules.
            channel.config().setAutoRead(false);
        }
    }

    void onBarrier(long epoch) {
        lock.lock();
        try {
            if (epoch != barrierEpoch + 1) {
                failLocked("rank " + peer + " sent barrier epoch " + epoch + " where " + (barrierEpoch + 1) + " was due", null);
                if (channel != null) {
                    channel.close();
                }
                return;
            }
            barrierEpoch = epoch;
            signalChange();
        } finally {
            lock.unlock();
        }
    }

    void onPeerClosing() {
        lock.lock();
        try {
            peerClosing = true;
        } finally {
            lock.unlock();
        }
    }

    void onProtocolViolation(String what) {
        fail("rank " + peer + " " + what + "; its connection was closed", null);
    }

    void onDisconnected() {
        lock.lock();
        try {
            boolean midMessage = tailMissing > 0;
            if (peerClosing) {
                failLocked("rank " + peer + " closed its transport", null);
            } else {
                failLocked("the connection to rank " + peer + " was lost"
                        + (midMessage ? " in the middle of a message" : "") + " (the process died or the network failed)",
                        null);
            }
        } finally {
            lock.unlock();
        }
    }

    void onConnectionError(Throwable cause) {
        // A reset (the peer's process died with bytes unread) reads like any other lost connection.
        fail("the connection to rank " + peer + " was lost (the process died or the network failed): "
                + cause.getMessage(), cause);
    }

    void onWritabilityChanged() {
        lock.lock();
        try {
            signalChange();
        } finally {
            lock.unlock();
        }
    }

    /** Marks the peer gone; the first reason wins. Waiting and later calls fail with it. */
    void fail(String reason, Throwable cause) {
        lock.lock();
        try {
            failLocked(reason, cause);
        } finally {
            lock.unlock();
        }
    }

    private void failLocked(String reason, Throwable cause) {
        if (failure == null) {
            failure = reason;
            failureCause = cause;
        }
        signalChange();
    }

    // ---- caller side ----

    /**
     * Sends {@code header} then {@code payload} as one message. A message of more than
     * {@link #COPY_THRESHOLD_BYTES} whose payload is direct memory (ND4J's, for one) is written
     * straight from it, without a copy, and this waits until the socket has taken every byte,
     * because the caller may reuse its buffer as soon as this returns. Smaller messages, and heap
     * payloads (which the socket could not take without a copy anyway), are copied into pooled
     * direct buffers and this returns at once.
     */
    void send(ByteBuffer header, ByteBuffer payload, long deadlineNanos, Duration timeout) {
        long length = (long) header.remaining() + payload.remaining();
        if (length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("send on rank " + rank + ": a message of " + length
                    + " bytes is longer than the largest a ByteBuffer can receive");
        }
        if (header.remaining() > SMALL_HEADER_BYTES) {
            // Not the shape the collectives use; join the parts once and send them as one payload.
            ByteBuffer joined = ByteBuffer.allocateDirect((int) length);
            joined.put(header.duplicate()).put(payload.duplicate()).flip();
            send(joined.slice(0, 0), joined, deadlineNanos, timeout);
            return;
        }
        startSending();
        try {
            Channel out = awaitWritable(deadlineNanos, timeout);
            boolean zeroCopy = length > COPY_THRESHOLD_BYTES && payload.isDirect();
            ChannelFuture last = writeFrames(out, header, payload, (int) length, zeroCopy);
            if (zeroCopy) {
                awaitWritten(last, deadlineNanos, timeout);
            }
        } finally {
            lock.lock();
            try {
                sending = false;
            } finally {
                lock.unlock();
            }
        }
    }

    /** Marks a send under way and resumes reading from the peer if it was paused (see {@link #sending}). */
    private void startSending() {
        boolean resume = false;
        lock.lock();
        try {
            sending = true;
            if (readingPaused) {
                readingPaused = false;
                resume = true;
            }
        } finally {
            lock.unlock();
        }
        if (resume) {
            resumeReading();
        }
    }

    /**
     * Writes the message as frames of at most {@link Frame#MAX_PAYLOAD} bytes, each its own write
     * (so no single write gathers more buffers than the kernel takes at once), flushed at the end.
     * The message header goes inline after the first frame header. The payload is wrapped in place
     * ({@code zeroCopy}) or copied into pooled direct buffers frame by frame.
     *
     * @return for {@code zeroCopy}, the last frame's write, which completes when the whole message
     *     is in the socket; otherwise null
     */
    private static ChannelFuture writeFrames(Channel out, ByteBuffer header, ByteBuffer payload, int length,
            boolean zeroCopy) {
        ByteBuffer rest = payload.duplicate();
        ByteBuf wrapped = zeroCopy ? Unpooled.wrappedBuffer(rest.duplicate()) : null;
        ChannelFuture last = null;
        int sent = 0;
        int payloadOffset = 0;
        do {
            boolean first = sent == 0;
            int frameLength = Math.min(Frame.MAX_PAYLOAD, length - sent);
            int inline = first ? header.remaining() : 0;
            int fromPayload = frameLength - inline;
            ByteBuf frame = out.alloc().directBuffer(Frame.HEADER_BYTES + inline + (zeroCopy ? 0 : fromPayload));
            Frame.writeHeader(frame, frameLength, Frame.DATA, first ? Frame.FIRST : 0, first ? length : 0);
            if (inline > 0) {
                frame.writeBytes(header.duplicate());
            }
            if (!zeroCopy) {
                frame.writeBytes(rest.duplicate().position(rest.position() + payloadOffset)
                        .limit(rest.position() + payloadOffset + fromPayload));
                out.write(frame, out.voidPromise());
            } else {
                out.write(frame, out.voidPromise());
                last = out.write(wrapped.retainedSlice(payloadOffset, fromPayload));
            }
            payloadOffset += fromPayload;
            sent += frameLength;
        } while (sent < length);
        if (wrapped != null) {
            wrapped.release();
        }
        out.flush();
        return last;
    }

    private Channel awaitWritable(long deadlineNanos, Duration timeout) {
        Channel ready = channel;
        if (failure == null && ready != null && ready.isWritable()) {
            return ready;
        }
        lock.lock();
        try {
            while (true) {
                throwIfFailed("send");
                Channel out = channel;
                if (out.isWritable()) {
                    return out;
                }
                long remaining = deadlineNanos - System.nanoTime();
                if (remaining <= 0) {
                    throw new CollectiveTimeoutException("send", rank, peer, "rank " + peer
                            + " has not taken the bytes already sent to it within " + timeout);
                }
                await(remaining, "send");
            }
        } finally {
            lock.unlock();
        }
    }

    private void awaitWritten(ChannelFuture written, long deadlineNanos, Duration timeout) {
        boolean interrupted = false;
        boolean done;
        try {
            done = written.await(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
            done = false;
        }
        if (!done) {
            // Netty still holds the caller's memory; closing the connection fails the write, and
            // only then may this return.
            fail(interrupted ? "a send to rank " + peer + " was interrupted" : "a send to rank " + peer
                    + " did not complete within " + timeout, null);
            written.channel().close();
            if (!written.awaitUninterruptibly(CLOSE_WAIT_MILLIS)) {
                // Only a stuck event loop gets here; the socket is closed, so nothing more is sent.
                throw new CollectiveException("send", rank, peer, "the connection to rank " + peer + " was closed"
                        + " after " + timeout + ", and the event loop did not release the message within "
                        + CLOSE_WAIT_MILLIS + " ms");
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
                throw new CollectiveException("send", rank, peer, "interrupted while the socket took the message");
            }
            throw new CollectiveTimeoutException("send", rank, peer, "rank " + peer
                    + " did not take a message within " + timeout + "; the connection was closed");
        }
        if (!written.isSuccess()) {
            fail("the connection to rank " + peer + " failed: " + written.cause(), written.cause());
            throw peerFailure("send");
        }
    }

    /**
     * Moves the next message into {@code dst}. With {@code exact}, its length must equal
     * {@code dst.remaining()}; otherwise at most. A message that does not fit stays queued.
     *
     * @return the message's length
     */
    int receive(ByteBuffer dst, boolean exact, long deadlineNanos, Duration timeout) {
        Inbound message;
        lock.lock();
        try {
            while ((message = inbound.peekFirst()) == null) {
                throwIfFailed("recv");
                long remaining = deadlineNanos - System.nanoTime();
                if (remaining <= 0) {
                    throw new CollectiveTimeoutException("recv", rank, peer,
                            "no message from rank " + peer + " within " + timeout);
                }
                await(remaining, "recv");
            }
            int length = message.length;
            if (exact ? length != dst.remaining() : length > dst.remaining()) {
                throw new CollectiveMismatchException("recv", rank, peer, "the next message from rank " + peer
                        + " is " + length + " bytes, the receive buffer " + (exact ? "expects exactly " : "holds at most ")
                        + dst.remaining() + " bytes; the message stays queued");
            }
        } finally {
            lock.unlock();
        }
        copyOut(message, dst, deadlineNanos, timeout);
        return message.length;
    }

    /**
     * Copies the message's parts into {@code dst} as they arrive. The copying happens outside the
     * lock, so the event loop can keep queuing the rest of a long message meanwhile.
     */
    private void copyOut(Inbound message, ByteBuffer dst, long deadlineNanos, Duration timeout) {
        int start = dst.position();
        ByteBuffer into = dst.duplicate();
        int copied = 0;
        while (true) {
            ByteBuf part;
            lock.lock();
            try {
                if (copied == message.length) {
                    inbound.pollFirst();
                    dst.position(start + copied);
                    break;
                }
                while ((part = message.parts.pollFirst()) == null) {
                    awaited = message;
                    awaitedBytes = Math.min(message.length - copied, WAKE_BATCH_BYTES);
                    if (failure != null) {
                        dropHead();
                        if (closedHere) {
                            throw new IllegalStateException("recv on rank " + rank + ": the transport was closed");
                        }
                        throw new PeerFailureException("recv", rank, peer, failure + ", after " + copied + " of the "
                                + message.length + " bytes of a message had arrived", failureCause);
                    }
                    long remaining = deadlineNanos - System.nanoTime();
                    if (remaining <= 0) {
                        // Half a message cannot be put back; the link is unusable from here on.
                        failLocked("rank " + peer + " stopped in the middle of a message", null);
                        dropHead();
                        throw new CollectiveTimeoutException("recv", rank, peer, "only " + copied + " of the "
                                + message.length + " bytes of a message from rank " + peer + " came within " + timeout);
                    }
                    try {
                        await(remaining, "recv");
                    } catch (CollectiveException interrupted) {
                        failLocked("a recv from rank " + peer + " was interrupted in the middle of a message", null);
                        dropHead();
                        throw interrupted;
                    }
                }
                awaited = null;
                message.available -= part.readableBytes();
            } finally {
                lock.unlock();
            }
            int partLength = part.readableBytes();
            into.limit(start + copied + partLength).position(start + copied);
            part.getBytes(part.readerIndex(), into);
            part.release();
            copied += partLength;
            consumed(partLength);
        }
        consumed(MESSAGE_OVERHEAD_BYTES);
    }

    private void dropHead() {
        Inbound head = inbound.pollFirst();
        if (head != null) {
            head.release();
        }
    }



    /** Counts bytes handed to the caller and resumes reading once the queue has drained to half. */
    private void consumed(int bytes) {
        boolean resume = false;
        lock.lock();
        try {
            queuedBytes -= bytes;
            if (readingPaused && queuedBytes <= pauseReadingBytes / 2) {
                readingPaused = false;
                resume = true;
            }
        } finally {
            lock.unlock();
        }
        if (resume) {
            resumeReading();
        }
    }

    /** Turns reading back on, on the event loop, behind any pause it already has queued. */
    private void resumeReading() {
        Channel in = channel;
        if (in == null || in.eventLoop().isShuttingDown()) {
            return;
        }
        try {
            in.eventLoop().execute(() -> in.config().setAutoRead(true));
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // The transport is closing; nothing will be read any more.
        }
    }

    /** Tells the peer that this rank reached barrier {@code epoch}. */
    void sendBarrier(long epoch, long deadlineNanos, Duration timeout) {
        Channel out = awaitWritable(deadlineNanos, timeout);
        ByteBuf frame = out.alloc().directBuffer(Frame.HEADER_BYTES);
        Frame.writeHeader(frame, 0, Frame.BARRIER, (byte) 0, epoch);
        out.writeAndFlush(frame, out.voidPromise());
    }

    /**
     * Waits until the peer has reached barrier {@code epoch}.
     *
     * @return true if it did, false if the deadline passed first
     */
    boolean awaitBarrier(long epoch, long deadlineNanos) {
        lock.lock();
        try {
            while (barrierEpoch < epoch) {
                throwIfFailed("barrier");
                long remaining = deadlineNanos - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                await(remaining, "barrier");
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Says goodbye to the peer and closes the connection; the returned future completes once it is closed. */
    ChannelFuture close() {
        Channel connected = channel;
        closedHere = true;
        fail("this rank closed its transport", null);
        if (connected == null) {
            return null;
        }
        if (connected.isActive()) {
            ByteBuf frame = connected.alloc().directBuffer(Frame.HEADER_BYTES);
            Frame.writeHeader(frame, 0, Frame.CLOSE, (byte) 0, 0);
            connected.writeAndFlush(frame, connected.voidPromise());
        }
        return connected.close();
    }

    /** Frees every buffered part; called once the connection is closed. */
    void releaseQueued() {
        lock.lock();
        try {
            for (Inbound message : inbound) {
                message.release();
            }
            inbound.clear();
            queuedBytes = 0;
        } finally {
            lock.unlock();
        }
    }

    private void throwIfFailed(String operation) {
        if (closedHere) {
            throw new IllegalStateException(operation + " on rank " + rank + ": the transport was closed");
        }
        if (failure != null) {
            throw peerFailure(operation);
        }
    }

    private PeerFailureException peerFailure(String operation) {
        return new PeerFailureException(operation, rank, peer, failure, failureCause);
    }

    /** Wakes whoever waits on this link; called with the lock held. */
    private void signalChange() {
        changed.signalAll();
    }

    /**
     * Waits, with the lock held, for the next change or {@code nanos}. It parks at once: spinning
     * first was measured to double a small message's round trip on two cores, where the spinning
     * thread takes the core the event loop needs.
     */
    private void await(long nanos, String operation) {
        try {
            changed.awaitNanos(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CollectiveException(operation, rank, peer, "interrupted while waiting for rank " + peer, e);
        }
    }

    /** A message from the peer: its announced length and the parts that have come so far. */
    private static final class Inbound {
        final int length;
        final ArrayDeque<ByteBuf> parts = new ArrayDeque<>(4);
        /** Bytes in {@link #parts}, not yet copied out. */
        long available;

        Inbound(int length) {
            this.length = length;
        }

        void release() {
            for (ByteBuf part : parts) {
                part.release();
            }
            parts.clear();
        }
    }
}
