package io.ringstar.transport.inproc;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.spi.Frame;
import io.ringstar.spi.Inbox;
import io.ringstar.spi.PeerChannel;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One rank's link to a peer in the same JVM. Its {@link #writeFrame} copies the frame into the
 * peer's inbox for this rank under the peer's I/O lock, in slices of at most {@value #SLICE_BYTES}
 * bytes, so that no copy holds that lock for long. A frame that cannot begin because the inbox is
 * over its limit waits (the peer wakes it as it takes bytes); once begun, a frame goes in whole,
 * as the inbox reads every message already begun to its end. The receiver is woken once the whole
 * frame is in.
 */
final class InProcessChannel extends PeerChannel {
    /** The most one offer copies while holding the receiver's lock. */
    static final int SLICE_BYTES = 1 << 20;

    private final InProcessGroup group;
    private final ByteBuffer frameHeader = ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);

    InProcessChannel(InProcessTransport transport, InProcessGroup group, int peer) {
        super(transport, peer, 64 << 10, InProcessTransport.RECEIVE_BUFFER_BYTES);
        this.group = group;
    }

    @Override
    protected void writeFrame(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        InProcessTransport receiver = group.member(peer);
        if (receiver == null || group.isClosed(peer)) {
            throw new PeerFailureException(writing(), rank, peer, "rank " + peer + " closed its transport");
        }
        PeerChannel theirs = receiver.channel(rank);
        Frame.write(frameHeader, 0, type, value);
        // This rank's own lock is not needed to write into the peer's inbox, and holding it while
        // taking the peer's could deadlock two ranks that send to each other at once.
        InProcessTransport self = (InProcessTransport) transport;
        int holds = self.letGoOfIo();
        boolean begun = false;
        try {
            begun = offer(receiver, theirs, frameHeader, deadline, false);
            if (type == Frame.DATA) {
                offer(receiver, theirs, header, deadline, true);
                offer(receiver, theirs, payload, deadline, true);
            }
        } catch (RuntimeException | Error e) {
            if (begun) {
                // Part of the frame is in the peer's inbox: it would read what came next as the rest.
                fail("a message to rank " + peer + " was cut short: " + e.getMessage(), e);
                theirs.fail("rank " + peer + " stopped in the middle of a message to this rank", e);
            }
            throw e;
        } finally {
            self.takeBackIo(holds);
        }
        theirs.wakeWaiter();
    }

    /**
     * Copies {@code bytes} (position to limit, left as they were) into the receiver's inbox for
     * this rank, waiting for room as needed.
     *
     * @return true once any byte is in
     */
    private boolean offer(InProcessTransport receiver, PeerChannel theirs, ByteBuffer bytes, Deadline deadline,
            boolean begun) {
        int position = bytes.position();
        int limit = bytes.limit();
        if (position == limit) {
            return begun;
        }
        int at = position;
        long waitStart = System.nanoTime();
        try {
            while (at < limit) {
                int slice = Math.min(limit - at, SLICE_BYTES);
                boolean taken = false;
                receiver.lockForPeer();
                try {
                    if (group.isClosed(peer) || receiver.isClosed()) {
                        throw new PeerFailureException(writing(), rank, peer, "rank " + peer + " closed its transport");
                    }
                    Inbox inbox = theirs.inbox();
                    if (inbox.canTake(slice, theirs.sending())) {
                        inbox.offer(bytes, at, at + slice);
                        bytes.limit(limit).position(position);
                        taken = true;
                    }
                } finally {
                    receiver.unlockForPeer();
                }
                if (taken) {
                    at += slice;
                    begun = true;
                    waitStart = System.nanoTime();
                    continue;
                }
                theirs.wakeWaiter();
                if (deadline.passed()) {
                    throw new CollectiveTimeoutException(writing(), rank, peer, "rank " + peer + " has not taken the "
                            + "bytes already sent to it within the timeout of " + deadline.timeout());
                }
                transport.awaitRound(waitStart, deadline, null, null);
            }
        } finally {
            bytes.limit(limit).position(position);
        }
        return begun;
    }

    @Override
    protected void onTaken() {
        // The peer may wait for room in this rank's inbox.
        InProcessTransport sender = group.member(peer);
        if (sender != null) {
            sender.channel(rank).wakeWaiter();
        }
    }

    @Override
    protected void closeChannel() {
    }
}
