package io.ringstar.spi;

import io.ringstar.CollectiveMismatchException;
import io.ringstar.Transport;
import java.nio.ByteBuffer;

/**
 * The copying receives written on top of the view receive: a handler that copies the message into
 * a caller's buffer from its position, and advances the position once the whole message is in.
 * A message of a length the buffer does not take is refused before any byte moves, so it stays
 * queued.
 */
public final class MessageCopy implements Transport.MessageHandler {
    /** An empty, read-only buffer: the header of a message that has none. */
    public static final ByteBuffer NO_BYTES = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final int rank;
    private final int peer;
    private final ByteBuffer dst;
    private final boolean exact;
    private final int start;
    private int length;

    private MessageCopy(int rank, int peer, ByteBuffer dst, boolean exact) {
        this.rank = rank;
        this.peer = peer;
        this.dst = dst;
        this.exact = exact;
        this.start = dst.position();
    }

    /** Takes a message of exactly {@code dst.remaining()} bytes. */
    public static MessageCopy exactly(int rank, int peer, ByteBuffer dst) {
        return new MessageCopy(rank, peer, dst, true);
    }

    /** Takes a message of at most {@code dst.remaining()} bytes. */
    public static MessageCopy atMost(int rank, int peer, ByteBuffer dst) {
        return new MessageCopy(rank, peer, dst, false);
    }

    @Override
    public void onStart(int messageLength) {
        int room = dst.limit() - start;
        if (exact ? messageLength != room : messageLength > room) {
            throw new CollectiveMismatchException("recv", rank, peer, "the next message from rank " + peer + " is "
                    + messageLength + " bytes, the buffer takes " + (exact ? "exactly " : "at most ") + room);
        }
        this.length = messageLength;
        if (messageLength == 0) {
            dst.position(start);
        }
    }

    @Override
    public void onBytes(ByteBuffer piece, int messageOffset) {
        int bytes = piece.remaining();
        dst.put(start + messageOffset, piece, piece.position(), bytes);
        if (messageOffset + bytes == length) {
            dst.position(start + length);
        }
    }
}
