package io.ringstar.transport.aeron;

import io.aeron.DirectBufferVector;
import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.aeron.Publication;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.Header;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.spi.Frame;
import io.ringstar.spi.Inbox;
import io.ringstar.spi.PeerChannel;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * This rank's link with one peer over Aeron: moves the bytes over its two streams, the exclusive
 * publication it sends on and the image it receives from, which its {@link PeerStreams} holds
 * with the rest of the streams' state (sessions, medium, the records that end forming the group
 * and closing, liveness). The thread holding the transport's I/O lock polls the image and hands each
 * fragment to the peer's {@link Inbox} as a view of Aeron's term buffer, so the bytes a waiting
 * receiver wants go to its handler without a copy; a frame is written straight into the term with
 * {@code tryClaim} (or {@code offer} for chunks longer than a frame).
 *
 * <p>A poll stops as soon as the waiting receiver has its whole message, so the next message
 * stays in the term for the next receive to take without a copy. A fragment the inbox has no room
 * for stays in the term too, and Aeron's flow control holds the sender back.
 */
final class AeronChannel extends PeerChannel implements ControlledFragmentHandler {
    /** Fragments read per poll of the image. */
    static final int FRAGMENT_LIMIT = 64;
    private static final byte[] EMPTY = new byte[0];

    /** The two streams and what is known of them besides the bytes. */
    final PeerStreams streams;
    private final ExclusivePublication publication;
    private final int chunkBytes;
    /** Woken before each write, so a long park of the driver never delays this stream. */
    private final DriverHandle driver;

    private final BufferClaim claim = new BufferClaim();
    private final UnsafeBuffer frameBytes = new UnsafeBuffer(
            ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN));
    /**
     * The frame being written, reused by every write so that sending allocates nothing: part 0 is
     * the frame header, 1 the caller's header, 2 its payload; {@code at} and {@code end} are
     * positions within each part. The caller's buffers are let go at the end.
     */
    private final ByteBuffer[] parts = new ByteBuffer[3];
    private final int[] at = new int[3];
    private final int[] end = new int[3];
    /** For {@code offer}: views of the parts, and one vector array per count of parts a chunk spans. */
    private final UnsafeBuffer[] offerViews = {frameBytes, new UnsafeBuffer(EMPTY), new UnsafeBuffer(EMPTY)};
    private final DirectBufferVector[][] offerVectors = {
        {new DirectBufferVector()},
        {new DirectBufferVector(), new DirectBufferVector()},
        {new DirectBufferVector(), new DirectBufferVector(), new DirectBufferVector()}};
    /** True while a frame is partly written: nothing else may go on the stream then. */
    private boolean frameInProgress;

    /** Read-only views of the term buffers fragments come from, one per term, made once. */
    private final ByteBuffer[] terms = new ByteBuffer[4];
    private final ByteBuffer[] termViews = new ByteBuffer[4];
    /** For a term that is no {@link ByteBuffer} (never, as Aeron maps them): fragments are copied here. */
    private ByteBuffer copied;

    /** The last poll stopped at a fragment the inbox had no room for: the image is not drained. */
    private boolean heldBack;

    AeronChannel(AeronTransport transport, int peer, int sessionIn, boolean ipc, ExclusivePublication publication,
            int chunkBytes, long receiveBufferBytes, DriverHandle driver) {
        super(transport, peer, 64 << 10, receiveBufferBytes);
        this.streams = new PeerStreams(sessionIn, ipc, publication);
        this.publication = publication;
        this.chunkBytes = chunkBytes > 0 ? chunkBytes : publication.maxPayloadLength();
        this.driver = driver;
    }

    // ---- reading ----

    /**
     * Polls the image into the inbox: at most {@link #FRAGMENT_LIMIT} fragments, fewer once a
     * waiting receiver has its message or the inbox is full. Under the I/O lock.
     *
     * @return fragments read
     */
    int poll() {
        Image source = streams.image;
        int read = 0;
        heldBack = false;
        if (source != null && failure() == null && inbox().malformed() == null) {
            read = source.controlledPoll(this, FRAGMENT_LIMIT);
        }
        if (streams.deathReported != null && read == 0 && !heldBack) {
            // Everything the peer had sent before it died has been read (a poll the full inbox
            // held back proves nothing: what is left waits until a receive makes room); and what
            // it left in its shared-memory ring, where a goodbye may wait.
            networkEnded();
            fail(peerClosed() ? "rank " + peer + " closed its transport" : streams.deathReported, null);
        }
        acknowledgeGoodbye();
        return read;
    }

    @Override
    public Action onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        Inbox inbox = inbox();
        if (!inbox.canTake(length, sending())) {
            // Left in the term: Aeron's flow control holds the sender back until the inbox drains.
            heldBack = true;
            return Action.ABORT;
        }
        ByteBuffer term = buffer.byteBuffer();
        if (term == null) {
            if (copied == null || copied.capacity() < length) {
                copied = ByteBuffer.allocateDirect(Math.max(length, 64 << 10)).order(ByteOrder.LITTLE_ENDIAN);
            }
            buffer.getBytes(offset, copied, 0, length);
            inbox.offer(copied, 0, length);
        } else {
            int from = buffer.wrapAdjustment() + offset;
            inbox.offer(viewOf(term), from, from + length);
        }
        // Stop once the waiting receiver is served, so that what follows stays in the term for the
        // next receive to take without a copy.
        return inbox.completed() >= 0 ? Action.BREAK : Action.CONTINUE;
    }

    /** The read-only view of {@code term}, its whole extent readable (the inbox leaves a view empty). */
    private ByteBuffer viewOf(ByteBuffer term) {
        for (int i = 0; i < terms.length; i++) {
            if (terms[i] == term) {
                return termViews[i].clear();
            }
            if (terms[i] == null) {
                terms[i] = term;
                termViews[i] = term.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
                return termViews[i];
            }
        }
        // More terms than slots (an image replaced): start over.
        java.util.Arrays.fill(terms, null);
        return viewOf(term);
    }

    /** Tells the peer that its goodbye arrived, when no frame is half written; never waits. */
    private void acknowledgeGoodbye() {
        if (!streams.acknowledgementOwed || frameInProgress || failure() != null) {
            return;
        }
        if (writesToSharedMemory()) {
            // Behind every frame sent to the peer, which go through the ring now.
            if (tryRecordToSharedMemory(PeerStreams.GOODBYE_ACK, 0)) {
                streams.acknowledgementOwed = false;
            }
            return;
        }
        if (publication.tryClaim(Frame.HEADER_BYTES, claim) > 0) {
            // No frame is being written, so the frame header's buffer is free to stage this one.
            Frame.write(frameBytes.byteBuffer(), 0, PeerStreams.GOODBYE_ACK, 0);
            claim.buffer().putBytes(claim.offset(), frameBytes, 0, Frame.HEADER_BYTES);
            claim.commit();
            streams.acknowledgementOwed = false;
        }
    }

    // ---- writing ----

    @Override
    protected void writeFrame(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        driver.wake();
        boolean data = type == Frame.DATA;
        long length = data ? (long) header.remaining() + payload.remaining() : 0;
        Frame.write(frameBytes.byteBuffer(), 0, type, value);
        parts[1] = data ? header : null;
        parts[2] = data ? payload : null;
        at[0] = 0;
        end[0] = Frame.HEADER_BYTES;
        at[1] = data ? header.position() : 0;
        end[1] = data ? header.limit() : 0;
        at[2] = data ? payload.position() : 0;
        end[2] = data ? payload.limit() : 0;
        long total = Frame.HEADER_BYTES + length;
        long left = total;
        int part = 0;
        frameInProgress = true;
        try {
            while (left > 0) {
                int chunk = (int) Math.min(left, chunkBytes);
                if (chunk <= publication.maxPayloadLength()) {
                    part = claimChunk(chunk, part, deadline);
                } else {
                    part = offerChunk(chunk, part, deadline);
                }
                left -= chunk;
            }
        } catch (RuntimeException | Error e) {
            if (left < total) {
                // The receiver joins the chunks by count: whatever went next on this stream would be
                // read as the rest of this frame. The stream is lost.
                fail("a message to rank " + peer + " was cut short after "
                        + Math.max(0, total - left - Frame.HEADER_BYTES)
                        + " of " + length + " bytes: " + (e.getMessage() != null ? e.getMessage() : e), e);
            }
            throw e;
        } finally {
            frameInProgress = false;
            parts[1] = null;
            parts[2] = null;
            offerViews[1].wrap(EMPTY);
            offerViews[2].wrap(EMPTY);
        }
    }

    /**
     * Writes the next {@code chunk} bytes of the parts straight into the term, advancing {@code at}.
     * A claim that cannot be filled is aborted, so Aeron skips it instead of stalling the stream.
     *
     * @return the part the next chunk starts in
     */
    private int claimChunk(int chunk, int firstPart, Deadline deadline) {
        long result;
        long waitStart = System.nanoTime();
        while ((result = publication.tryClaim(chunk, claim)) <= 0) {
            waitStart = backOff(result, waitStart, deadline);
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
                    claim.buffer().putBytes(claim.offset() + written, frameBytes, at[0], n);
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
    private int offerChunk(int chunk, int firstPart, Deadline deadline) {
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
        long result;
        long waitStart = System.nanoTime();
        while ((result = publication.offer(vectors)) <= 0) {
            waitStart = backOff(result, waitStart, deadline);
        }
        return p;
    }

    /**
     * After Aeron refused a claim or offer with {@code result}: throws if the peer failed, the
     * stream was closed under this rank, or the deadline passed; otherwise waits one round, which
     * keeps every peer's bytes moving.
     *
     * @return the new start of the wait
     */
    private long backOff(long result, long waitStart, Deadline deadline) {
        String known = failure();
        if (known != null) {
            throw new PeerFailureException(writing(), rank, peer, known);
        }
        if (result == Publication.CLOSED) {
            throw failAndThrow("the stream to rank " + peer + " was closed under this rank (its Aeron client or media"
                    + " driver stopped)");
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            throw failAndThrow("the stream to rank " + peer + " reached Aeron's maximum position");
        }
        if (deadline.passed()) {
            String why = result == Publication.NOT_CONNECTED ? "the stream to it is not connected"
                    : "back-pressure: it is not receiving";
            throw new CollectiveTimeoutException(writing(), rank, peer, "rank " + peer + " did not take the data within"
                    + " the timeout of " + deadline.timeout() + " (" + why + ")");
        }
        if (transport.awaitRound(waitStart, deadline, null, null) > 0) {
            return System.nanoTime();
        }
        return waitStart;
    }

    private CollectiveException failAndThrow(String reason) {
        fail(reason, null);
        return new PeerFailureException(writing(), rank, peer, failure());
    }

    // ---- the peer's state besides the bytes ----

    @Override
    protected void onTransportRecord(int type, long value) {
        if (!streams.onRecord(type)) {
            super.onTransportRecord(type, value);
        }
    }

    @Override
    protected void onGoodbye() {
        streams.acknowledgementOwed = true;
    }

    /** The peer's image went away: it closed, died, or was unreachable for the liveness timeout. */
    void onImageGone(String livenessTimeout) {
        fail(peerClosed() ? "rank " + peer + " closed its transport"
                : "rank " + peer + "'s stream went away (its process or media driver stopped, or it was unreachable"
                        + " for longer than " + livenessTimeout + ")", null);
    }

    /** The peer died (its sentinel connection closed): it is failed once what it sent is read. */
    void deathReported(String why) {
        if (!peerClosed()) {
            streams.deathReported(why);
        }
    }

    /** Checks the publication still has a subscriber; gone for the liveness timeout means the peer is. */
    void checkConnected(long now, long livenessNanos) {
        if (failure() != null || peerClosed()) {
            return;
        }
        String gone = streams.checkConnected(peer, now, livenessNanos);
        if (gone != null) {
            fail(gone, null);
        }
    }

    @Override
    protected void closeChannel() {
        // The publication and image belong to the Aeron client, which the transport closes after.
    }

    @Override
    public String toString() {
        return "AeronChannel{rank=" + rank + ", peer=" + peer + ", " + (streams.ipc() ? "ipc" : "udp") + '}';
    }
}
