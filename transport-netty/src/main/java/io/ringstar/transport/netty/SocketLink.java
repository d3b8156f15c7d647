package io.ringstar.transport.netty;

import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.spi.Frame;
import io.ringstar.spi.Inbox;
import io.ringstar.spi.PeerChannel;
import io.ringstar.spi.SameHost;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * This rank's TCP connection to one peer once the group has formed: a non-blocking socket that the
 * thread holding the transport's I/O lock reads into the peer's {@link Inbox} and writes frames to
 * with one gathering write each (frame header, message header and payload straight from the
 * caller's memory). With TLS the bytes go through a {@link TlsCodec} on the way.
 *
 * <p>The socket is registered with the transport's selector for reading while the inbox has room
 * (so a peer that sends more than this rank takes is held back by TCP itself) and for writing
 * while a send waits for the socket to take its bytes. Once the peer's frames come through
 * shared memory ({@link #readsFromSharedMemory}) the socket carries nothing but its end: it is
 * then read always, whatever the inbox holds, into a small buffer of its own, so that the peer's
 * death is seen at once even while the inbox from it is full; a byte there breaks the protocol.
 */
final class SocketLink extends PeerChannel {
    /** Reads per round at most, so one busy peer does not starve the others. */
    private static final int READS_PER_ROUND = 4;

    private final SocketChannel socket;
    private final TlsCodec tls;
    private final SelectionKey key;
    private final ByteBuffer frameHeader = ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer[] gather = new ByteBuffer[3];
    /** The interest last given to the selector. */
    private int interest;
    /** A send waits for the socket to take more. */
    private boolean wantsWrite;
    private boolean ended;
    /** Where the socket is read once frames come through shared memory (only its end is expected). */
    private ByteBuffer endOnly;

    SocketLink(NettyTransport transport, int peer, Handover.Taken taken, Selector selector, long receiveBufferBytes)
            throws IOException {
        super(transport, peer, 256 << 10, receiveBufferBytes);
        this.socket = taken.socket();
        this.tls = taken.engine() == null ? null : new TlsCodec(taken.engine(), taken.cipher());
        socket.configureBlocking(false);
        this.key = socket.register(selector, SelectionKey.OP_READ, this);
        this.interest = SelectionKey.OP_READ;
        if (taken.plain().hasRemaining()) {
            ByteBuffer kept = taken.plain();
            inbox().offer(kept, kept.position(), kept.limit());
        }
    }

    /** Whether the peer connects from this host ({@link SameHost#connection}). */
    boolean onThisHost() {
        return SameHost.connection(socket);
    }

    /** Sets the selector interest this link needs now: read while the inbox has room, write while a send waits. */
    void updateInterest() {
        int wanted = 0;
        if (!ended && failure() == null && (readsFromSharedMemory() || inbox().room(sending()) >= readSpaceNeeded())) {
            wanted |= SelectionKey.OP_READ;
        }
        if (wantsWrite) {
            wanted |= SelectionKey.OP_WRITE;
        }
        if (wanted != interest && key.isValid()) {
            key.interestOps(wanted);
            interest = wanted;
        }
    }

    /**
     * True while decryptable bytes wait in the TLS codec: the socket will not signal them again, so
     * the transport reads such a link every round while its inbox has room.
     */
    boolean hasBufferedInput() {
        return tls != null && tls.hasBufferedInput() && !ended && failure() == null;
    }

    private int readSpaceNeeded() {
        return tls == null ? 1 : tls.minimumReadSpace();
    }

    /**
     * Reads what the socket has, as far as the inbox has room; the inbox hands the bytes on to a
     * waiting receiver. Notes the end of the stream or a failed connection as this peer's failure.
     *
     * @return bytes read
     */
    int read() {
        if (ended || failure() != null) {
            return 0;
        }
        int total = 0;
        try {
            for (int round = 0; round < READS_PER_ROUND; round++) {
                if (readsFromSharedMemory()) {
                    // The peer's switch record came (maybe in this very read): its frames are in the ring.
                    readEnd();
                    break;
                }
                Inbox inbox = inbox();
                if (inbox.room(sending()) < readSpaceNeeded()) {
                    break;
                }
                ByteBuffer into = inbox.writable(sending());
                if (into == null) {
                    break;
                }
                int space = into.remaining();
                int n = tls == null ? socket.read(into) : tls.read(socket, into);
                if (n < 0) {
                    ended();
                    break;
                }
                if (n == 0) {
                    break;
                }
                total += n;
                inbox.stored(n);
                if (n < space) {
                    break;
                }
            }
        } catch (IOException e) {
            lost(e);
        }
        return total;
    }

    /**
     * Reads the socket of a peer whose frames come through shared memory: the end of the stream is
     * the peer's close or death (its goodbye, if any, is in the ring); bytes are a protocol breach.
     */
    private void readEnd() throws IOException {
        if (endOnly == null) {
            endOnly = ByteBuffer.allocate(tls == null ? 64 : readSpaceNeeded());
        }
        int n = tls == null ? socket.read(endOnly.clear()) : tls.read(socket, endOnly.clear());
        if (n < 0) {
            ended();
        } else if (n > 0) {
            fail("rank " + peer + " sent " + n + " bytes over the network after it switched to shared memory,"
                    + " where nothing but the connection's end may come; nothing more is read from it", null);
        }
    }

    private void ended() {
        ended = true;
        // A peer on shared memory said goodbye through its ring before it closed the socket.
        networkEnded();
        if (peerClosed()) {
            fail("rank " + peer + " closed its transport", null);
        } else {
            fail("the connection to rank " + peer + " was lost"
                    + (inbox().isEmpty() ? "" : " in the middle of a message")
                    + " (the process died or the network failed)", null);
        }
    }

    private void lost(IOException e) {
        ended = true;
        networkEnded();
        if (peerClosed()) {
            fail("rank " + peer + " closed its transport", null);
            return;
        }
        fail("the connection to rank " + peer + " was lost (the process died or the network failed): " + e.getMessage(),
                e);
    }

    @Override
    protected void writeFrame(int type, long value, ByteBuffer header, ByteBuffer payload, Deadline deadline) {
        Frame.write(frameHeader, 0, type, value);
        frameHeader.clear();
        int count = 1;
        gather[0] = frameHeader;
        int headerPosition = header.position();
        int payloadPosition = payload.position();
        if (type == Frame.DATA) {
            gather[1] = header;
            gather[2] = payload;
            count = 3;
        }
        long total = Frame.HEADER_BYTES + (type == Frame.DATA ? (long) header.remaining() + payload.remaining() : 0);
        long written = 0;
        long waitStart = System.nanoTime();
        try {
            while (true) {
                if (failure() != null) {
                    throw cutShort(written, total, new PeerFailureException(writing(), rank, peer, failure()));
                }
                boolean moved;
                if (written < total) {
                    long n = tls == null ? socket.write(gather, 0, count) : tls.write(socket, gather, count);
                    written += n;
                    moved = n > 0;
                } else {
                    moved = tls.flush(socket);
                }
                if (written == total && (tls == null || !tls.hasPending())) {
                    return;
                }
                if (moved) {
                    waitStart = System.nanoTime();
                    continue;
                }
                if (deadline.passed()) {
                    // The catch below records that the frame was cut short.
                    throw new CollectiveTimeoutException(writing(), rank, peer, "rank " + peer
                            + " has not taken the bytes already sent to it within the timeout of "
                            + deadline.timeout());
                }
                wantsWrite = true;
                try {
                    transport.awaitRound(waitStart, deadline, null, null);
                } finally {
                    wantsWrite = false;
                }
            }
        } catch (IOException e) {
            lost(e);
            throw new PeerFailureException(writing(), rank, peer, failure(), e);
        } catch (RuntimeException | Error e) {
            // Anything else that ends the write midway (the transport closing under a waiting
            // caller) leaves part of the frame on the wire: the stream is lost, say so once.
            if (failure() == null) {
                cutShort(written, total, e);
            }
            throw e;
        } finally {
            header.position(headerPosition);
            payload.position(payloadPosition);
            gather[1] = null;
            gather[2] = null;
        }
    }

    /** A send that gave up after part of its frame went out leaves the stream unusable: the peer is failed first. */
    private <T extends Throwable> T cutShort(long written, long total, T why) {
        if (written > 0 && written < total) {
            fail("a message to rank " + peer + " was cut short after " + written + " of " + total + " bytes: "
                    + why.getMessage(), why);
            close();
        }
        return why;
    }

    /** Closes the socket; the peer's reads then end. What was written before goes out first. */
    void close() {
        ended = true;
        key.cancel();
        try {
            if (socket.isOpen()) {
                try {
                    socket.shutdownOutput();
                    // Unread bytes at close make TCP reset the connection, which can cost the peer
                    // what it has not read yet: take what is there first.
                    ByteBuffer drain = ByteBuffer.allocate(64 << 10);
                    for (int i = 0; i < 16 && socket.read(drain) > 0; i++) {
                        drain.clear();
                    }
                } catch (IOException e) {
                    // Already reset or closed by the peer: nothing to be careful about.
                }
            }
            socket.close();
        } catch (IOException e) {
            // Closing a socket fails only when it is gone already.
        }
    }

    @Override
    protected void closeChannel() {
        close();
    }

    @Override
    public String toString() {
        return "SocketLink{rank=" + rank + ", peer=" + peer + ", " + socket + '}';
    }
}
