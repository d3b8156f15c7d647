package io.ringstar.spi;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The shared-memory side of one {@link PeerChannel}: the state of the negotiation with the peer
 * ({@code SharedMemoryNegotiation}), the ring this rank writes to the peer and the one it reads from
 * it, and the copying in and out of them. The channel's network connection stays open beside them:
 * it carries the negotiation's records and ends when the peer dies.
 *
 * <p>Order: the writer sends {@link Frame#SHM_SWITCH} over the network and from then on writes every
 * frame to the ring; the reader takes bytes from the ring only once it has parsed that record from
 * the network stream. So every frame reaches the inbox in the order it was sent.
 *
 * <p>Threads: everything here but the counters is touched by the holder of the transport's I/O lock;
 * the negotiation's fields are written from {@link PeerChannel#onRecord} under it too.
 *
 * <p>Faults: a ring file truncated or replaced after it was mapped makes the JVM throw
 * {@link InternalError} ({@code SIGBUS}; {@link SharedMemoryRing} makes it surface from its own
 * methods); every access to the rings here catches it and fails the peer with a message saying
 * so, instead of letting it end the caller's or the background reader's thread.
 */
final class SharedMemoryLink {
    private final PeerChannel channel;
    private final ByteBuffer frameHeader = ByteBuffer.allocateDirect(Frame.HEADER_BYTES)
            .order(ByteOrder.LITTLE_ENDIAN);
    /** Stages a record written from inside the I/O ({@link #tryRecord}) while a frame may wait in the other. */
    private final ByteBuffer recordHeader = ByteBuffer.allocateDirect(Frame.HEADER_BYTES)
            .order(ByteOrder.LITTLE_ENDIAN);
    /** A frame is being written into the ring (its writer may be waiting for room). */
    private boolean inFrame;

    // ---- the negotiation, see SharedMemoryNegotiation ----

    /** What the peer offered: nothing yet, a ring ({@link #offeredNonce}) or none. */
    static final int NOTHING = 0;
    static final int OFFERED = 1;
    static final int NONE = 2;
    int peerOffer = NOTHING;
    long offeredNonce;
    /** This rank answered the peer's offer. */
    boolean answered;
    /** The peer's answer to this rank's offer: nothing yet, accepted, refused. */
    static final int ACCEPTED = 1;
    static final int REFUSED = 2;
    int peerAnswer = NOTHING;

    /** The ring this rank writes to the peer, from its creation until close; null without one. */
    SharedMemoryRing out;
    /** Every frame to the peer goes into {@link #out}: the switch record went out. */
    volatile boolean writing;
    /** The ring this rank reads from the peer, once opened; null without one. */
    SharedMemoryRing in;
    /** The peer's switch record was parsed: its frames now come through {@link #in}. */
    volatile boolean reading;
    /** Bytes of the frame being taken that are still in the ring (0 at a frame boundary). */
    private long frameLeft;
    /** Bytes that went through the rings, each way; written under the I/O lock, read by anyone. */
    private volatile long bytesWritten;
    private volatile long bytesRead;

    SharedMemoryLink(PeerChannel channel) {
        this.channel = channel;
    }

    long bytesWritten() {
        return bytesWritten;
    }

    long bytesRead() {
        return bytesRead;
    }

    // ---- writing ----

    /**
     * {@link PeerChannel#writeFrame} into the ring: the frame header, then the message header and
     * payload straight from the caller's buffers (positions restored). While the ring is full it
     * waits with {@link PeerTransport#awaitRound}, at most until {@code deadline}; a frame cut short
     * fails the channel, since what follows would be read as its rest.
     */
    void writeFrame(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        inFrame = true;
        try {
            writeWhole(type, value, header, payload, deadline);
        } finally {
            inFrame = false;
        }
    }

    /** See {@link PeerChannel#tryRecordToSharedMemory}. */
    boolean tryRecord(int type, long value) {
        try {
            if (inFrame || out.writable() < Frame.HEADER_BYTES) {
                return false;
            }
            Frame.write(recordHeader, 0, type, value);
            out.put(recordHeader.clear());
        } catch (InternalError e) {
            faulted(out, "written", e);
            return false;
        }
        bytesWritten += Frame.HEADER_BYTES;
        return true;
    }

    /**
     * A ring's mapping faulted ({@code SIGBUS}, see the class comment): fails the peer, naming the
     * file; returns the message.
     */
    private String faulted(SharedMemoryRing ring, String how, InternalError e) {
        String why = "the shared-memory ring " + ring.path() + " between this rank and rank " + channel.peer
                + " faulted when " + how + " (" + e.getMessage() + "): the file was truncated or replaced beneath"
                + " its mapping; nothing more goes through it";
        channel.fail(why, e);
        return channel.failure();
    }

    private void writeWhole(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        Frame.write(frameHeader, 0, type, value);
        frameHeader.clear();
        long total = Frame.HEADER_BYTES + (type == Frame.DATA ? (long) header.remaining() + payload.remaining() : 0);
        int headerPosition = header.position();
        int payloadPosition = payload.position();
        long start = out.produced();
        try {
            copy(frameHeader, deadline);
            if (type == Frame.DATA) {
                copy(header, deadline);
                copy(payload, deadline);
            }
            bytesWritten += total;
        } catch (RuntimeException | Error e) {
            long written = out.produced() - start;
            if (written > 0 && channel.failure() == null) {
                channel.fail("a message to rank " + channel.peer + " was cut short in the shared-memory ring after "
                        + written + " of " + total + " bytes: " + e.getMessage(), e);
            }
            throw e;
        } finally {
            header.position(headerPosition);
            payload.position(payloadPosition);
        }
    }

    private void copy(ByteBuffer source, Deadline deadline) {
        long waitStart = System.nanoTime();
        while (source.hasRemaining()) {
            int copied;
            try {
                copied = out.put(source);
            } catch (InternalError e) {
                throw new PeerFailureException(channel.writing(), channel.rank, channel.peer,
                        faulted(out, "written", e), e);
            }
            if (copied > 0) {
                waitStart = System.nanoTime();
                continue;
            }
            String failure = channel.failure();
            if (failure != null) {
                throw new PeerFailureException(channel.writing(), channel.rank, channel.peer, failure);
            }
            if (deadline.passed()) {
                throw new CollectiveTimeoutException(channel.writing(), channel.rank, channel.peer, "rank "
                        + channel.peer + " has not taken the bytes in its shared-memory ring within the timeout of "
                        + deadline.timeout() + " (the ring of " + out.capacity() + " bytes stayed full)");
            }
            channel.transport.awaitRound(waitStart, deadline, null, null);
        }
    }

    // ---- reading ----

    /**
     * Hands what the peer published in its ring to the channel's inbox, frame by frame: the
     * contiguous part up to the wrap at a time, as views of the mapping (a waiting receiver reduces
     * straight out of it), then gives the space back to the writer. Stops once the waiting receiver
     * has its whole message (what follows stays in the ring for the next receive to take without a
     * copy), and when the inbox is full (unless {@code force}: the stream ended and what is left is
     * to be seen), which holds the writer back. A ring whose positions make no sense fails the peer.
     *
     * @return bytes taken
     */
    int poll(boolean force) {
        SharedMemoryRing ring = in;
        if (!reading || ring == null || channel.failure() != null) {
            return 0;
        }
        int moved = 0;
        try {
            moved = take(ring, force);
        } catch (InternalError e) {
            faulted(ring, "read", e);
        }
        if (moved > 0) {
            bytesRead += moved;
        }
        return moved;
    }

    /** {@link #poll}'s work, as far as a fault of the mapping lets it go (it throws {@link InternalError} then). */
    private int take(SharedMemoryRing ring, boolean force) {
        Inbox inbox = channel.inbox;
        long available = ring.readable();
        if (available < 0) {
            channel.fail("rank " + channel.peer + "'s shared-memory ring " + ring.path() + " is corrupt (its producer"
                    + " position is not within the ring of its consumer's); nothing more is read from it", null);
            return 0;
        }
        int moved = 0;
        boolean sending = channel.sending();
        while (available > 0 && inbox.malformed() == null) {
            if (frameLeft == 0 && inbox.completed() >= 0 && !force) {
                // The waiting receiver has its whole message (from this round or an earlier one):
                // what follows stays in the ring for the next receive to take without a copy.
                break;
            }
            if (frameLeft == 0) {
                if (available < Frame.HEADER_BYTES) {
                    // The writer publishes the rest of the header in a moment; the inbox needs it whole
                    // to know where the frame ends.
                    break;
                }
                frameLeft = frameLength(ring);
            }
            int index = ring.readIndex();
            int piece = (int) Math.min(Math.min(frameLeft, available), ring.capacity() - index);
            if (!force && !inbox.canTake(piece, sending)) {
                break;
            }
            inbox.offer(ring.view(), index, index + piece);
            ring.release(piece);
            frameLeft -= piece;
            available -= piece;
            moved += piece;
        }
        return moved;
    }

    /**
     * The length of the frame that starts at the ring's read position: its header and message. A
     * header that breaks the framing counts as the header alone: the inbox then refuses it and
     * fails the peer.
     */
    private static long frameLength(SharedMemoryRing ring) {
        long first = ring.peekLong(0);
        int magic = (int) first;
        int type = (int) (first >>> 32) & 0xFF;
        long value = ring.peekLong(Frame.VALUE_OFFSET);
        if (magic == Frame.MAGIC && type == Frame.DATA && value >= 0 && value <= Frame.MAX_MESSAGE_BYTES) {
            return Frame.HEADER_BYTES + value;
        }
        return Frame.HEADER_BYTES;
    }

    /** Takes everything left in the incoming ring, whatever the inbox's limit: the peer's stream ended. */
    void drain() {
        while (poll(true) > 0) {
            // Until the ring is empty, or the inbox refused the stream.
        }
    }

    /**
     * Whether the peer closed its ring to this rank ({@link SharedMemoryRing#markWriterClosed}): a
     * sender then drains it first, so a goodbye there makes the send fail at once, as a goodbye on
     * the network would have (the network connection ends a moment later). One acquiring read.
     */
    boolean peerClosedItsRing() {
        SharedMemoryRing ring = in;
        if (!reading || ring == null) {
            return false;
        }
        try {
            return ring.writerClosed();
        } catch (InternalError e) {
            faulted(ring, "read", e);
            return false;
        }
    }

    /**
     * Marks this rank's ring closed (its last frame, the goodbye, is in it), unlinks both ring files
     * (whichever end is first removes a file) and stops using them.
     *
     * @param unmap free both mappings now ({@link SharedMemoryRing#unmap}); only when no other
     *     thread can reach this link again (the closer holds the I/O lock, which it took for good,
     *     and the background reader has ended): every later call finds the link without rings
     */
    void close(boolean unmap) {
        if (out != null) {
            // A failed peer needs no mark (and its ring may be the file that faulted).
            if (writing && channel.failure() == null) {
                try {
                    out.markWriterClosed();
                } catch (InternalError e) {
                    // The file is gone beneath the mapping: the peer learns of the close from the network.
                }
            }
            out.close();
        }
        writing = false;
        reading = false;
        if (in != null) {
            in.close();
        }
        if (unmap) {
            if (out != null) {
                out.unmap();
                out = null;
            }
            if (in != null) {
                in.unmap();
                in = null;
            }
        }
    }
}
