package io.ringstar.spi;

import io.ringstar.Transport.MessageHandler;
import java.nio.ByteBuffer;

/**
 * What has come from one peer and not been taken yet: the byte stream of {@link Frame}s parsed as
 * it arrives, the messages queued in order, and the message a receiver is taking right now.
 *
 * <p>Bytes come in two ways. A socket transport reads them straight into this inbox's storage
 * ({@link #writable}, then {@link #stored}); a transport whose bytes live elsewhere (Aeron's term
 * buffer, an in-process peer's send) offers them ({@link #offer}). A receiver attaches its handler
 * ({@link #attach}) and gets the head message as read-only views: of the storage, or, for an
 * offered piece that it can take at once (nothing queued before it), of the piece itself, so such
 * bytes are never copied here at all. Everything else is kept in the storage, in one direct
 * buffer that grows as needed up to the limit ({@code limitBytes}, twice that while this rank is
 * sending to the peer) and is compacted as its head is taken; past the limit the transport stops
 * reading from the peer, which is the back-pressure that bounds memory. A message already begun is
 * read to its end whatever the limit, so the storage holds at most twice the limit and one message:
 * two ranks that send each other one message each before they receive never wait on each other,
 * however long the messages.
 *
 * <p>Control records are handed to the {@link Listener} as soon as they are parsed, even behind
 * messages that wait to be taken, so a barrier never waits for the data before it. A frame that
 * breaks the framing makes the inbox ignore everything after it and tells the listener.
 *
 * <p>Not thread-safe: its transport uses it under one lock. A handler is called only from
 * {@link #attach}, {@link #stored} and {@link #offer}, on the thread that calls them, and an
 * exception it throws is kept here ({@link #takeHandlerFailure}), never thrown into the I/O code.
 *
 * <p>This class parses the stream and is the public face; {@code InboxDelivery} hands bytes to the
 * handler and {@code InboxStorage} keeps the storage and the queue of messages, as superclasses.
 */
public final class Inbox extends InboxDelivery {
    /** What the inbox tells its owner about the stream. */
    public interface Listener {
        /** A control record (any type but {@link Frame#DATA}) arrived. */
        void onRecord(int type, long value);

        /** The stream broke its framing; {@code what} says how. Nothing more is read. */
        void onMalformed(String what);
    }

    private final Listener listener;
    private String malformed;

    /**
     * @param initialBytes the storage's first size; it grows when more must wait
     * @param limitBytes bytes that may wait to be taken before the transport stops reading
     */
    public Inbox(Listener listener, int initialBytes, long limitBytes) {
        super(initialBytes, limitBytes);
        this.listener = listener;
    }

    // ---- the receiver's side ----

    /**
     * Gives the head message to {@code handler}: what has arrived of it at once, the rest as it
     * comes, until {@link #completed()} says it is whole or {@link #detach} is called. A message
     * the receiver began earlier continues where it stopped.
     */
    public void attach(MessageHandler receiver) {
        this.handler = receiver;
        this.completed = -1;
        deliver();
    }

    /** The length of the message the attached handler has taken whole, or -1 while it has not. */
    public int completed() {
        return completed;
    }

    /**
     * Ends the attachment. With {@code abandon}, a head message of which part was handed over is
     * given up: the rest of it is dropped as it arrives, so the next message is intact; without,
     * it waits for the same receiver to attach again.
     */
    public void detach(boolean abandon) {
        handler = null;
        // No receiver is served any more: a transport that stops polling once it is (Aeron) reads
        // at full pace again.
        completed = -1;
        if (abandon && queueCount > 0 && queueState[queueHead] == STARTED) {
            queueState[queueHead] = ABANDONED;
            dropAbandonedHead();
        }
    }

    /** The exception the last handler threw, once, or null; the receiver rethrows it. */
    public RuntimeException takeHandlerFailure() {
        RuntimeException failure = handlerFailure;
        handlerFailure = null;
        return failure;
    }

    /** True if nothing of any message is here: no message queued, none half-arrived. */
    public boolean isEmpty() {
        return queueCount == 0;
    }

    /** Why the stream broke its framing, or null. */
    public String malformed() {
        return malformed;
    }

    /** Bytes waiting to be taken (or parsed), the figure the limit applies to. */
    public long waitingBytes() {
        return writePos - liveStart();
    }

    // ---- the transport's side ----

    /**
     * Where a socket transport reads the next bytes into: the storage itself, with position at the
     * end of what is stored and limit where the allowance ends. Call {@link #stored} with the count
     * read. Null when the limit is reached: stop reading from the peer until bytes are taken.
     *
     * @param sending whether this rank is sending to the peer right now (the limit doubles)
     */
    public ByteBuffer writable(boolean sending) {
        long allowance = room(sending);
        if (allowance <= 0) {
            return null;
        }
        makeRoom((int) Math.min(allowance, Integer.MAX_VALUE - 64));
        int end = (int) Math.min(storage.capacity(), writePos + allowance);
        storage.limit(end).position(writePos);
        return storage;
    }

    /**
     * Bytes a read may still bring: to the limit, or to the end of a message already begun if that
     * is further (0 when neither allows more, or the stream broke).
     */
    public long room(boolean sending) {
        return malformed != null ? 0 : Math.max(Math.max(0, allowance(sending) - waitingBytes()), payloadLeft);
    }

    /** Takes note of {@code count} bytes read into {@link #writable}'s buffer; parses and hands them on. */
    public void stored(int count) {
        if (count <= 0) {
            return;
        }
        writePos += count;
        parse();
        deliver();
    }

    /**
     * Whether {@link #offer} would take a piece of {@code bytes} whole: always when nothing waits
     * (so a peer can always make progress) or the piece belongs to a message already begun, else
     * within the limit.
     */
    public boolean canTake(int bytes, boolean sending) {
        long waiting = waitingBytes();
        return waiting == 0 || bytes <= payloadLeft || waiting + bytes <= allowance(sending);
    }

    /**
     * Takes the bytes of {@code piece} from {@code from} to {@code to}: hands them straight to the
     * attached handler where it can take them, stores the rest. The inbox moves the piece's
     * position and limit as it likes and leaves it empty; the caller repositions it before reuse.
     * Stores everything it is given (callers check {@link #canTake} first).
     */
    public void offer(ByteBuffer piece, int from, int to) {
        piece.limit(piece.capacity());
        int at = from;
        while (at < to && malformed == null && parsePos == writePos) {
            if (payloadLeft == 0) {
                if (to - at < Frame.HEADER_BYTES) {
                    break;
                }
                int type = Frame.type(piece, at);
                long value = Frame.value(piece, at);
                String wrong = checkHeader(Frame.magic(piece, at), type, Frame.flagsAndReserved(piece, at), value);
                if (wrong != null) {
                    breakFraming(wrong);
                    return;
                }
                if (type != Frame.DATA) {
                    at += Frame.HEADER_BYTES;
                    listener.onRecord(type, value);
                    continue;
                }
                if (handler == null || queueCount != 0 || !startDirect((int) value)) {
                    break;
                }
                at += Frame.HEADER_BYTES;
                continue;
            }
            int tail = tailIndex();
            int n = (int) Math.min(payloadLeft, to - at);
            if (queueState[tail] == ABANDONED && tail == queueHead) {
                queueArrived[tail] += n;
                queueDone[tail] += n;
            } else if (handler != null && tail == queueHead && queueState[tail] == STARTED
                    && queueArrived[tail] == queueDone[tail]) {
                int offset = queueDone[tail];
                queueArrived[tail] += n;
                queueDone[tail] += n;
                handOver(piece, at, n, offset);
                piece.limit(piece.capacity());
            } else {
                break;
            }
            payloadLeft -= n;
            at += n;
            finishHeadIfDone();
        }
        if (at < to && malformed == null) {
            append(piece, at, to - at);
            parse();
            deliver();
        }
        piece.limit(0);
    }

    /** Message bytes and records alike are ignored from now on (the peer is failed by its owner). */
    public void close() {
        malformed = malformed == null ? "closed" : malformed;
        handler = null;
    }

    // ---- parsing ----

    /** Parses the stored bytes not parsed yet: frame headers, records, the newest message's arrival. */
    private void parse() {
        while (parsePos < writePos && malformed == null) {
            if (payloadLeft > 0) {
                int n = (int) Math.min(payloadLeft, writePos - parsePos);
                queueArrived[tailIndex()] += n;
                parsePos += n;
                payloadLeft -= n;
                continue;
            }
            if (writePos - parsePos < Frame.HEADER_BYTES) {
                return;
            }
            int type = Frame.type(storage, parsePos);
            long value = Frame.value(storage, parsePos);
            String wrong = checkHeader(Frame.magic(storage, parsePos), type, Frame.flagsAndReserved(storage, parsePos),
                    value);
            if (wrong != null) {
                breakFraming(wrong);
                return;
            }
            parsePos += Frame.HEADER_BYTES;
            if (type == Frame.DATA) {
                push((int) value, parsePos, NEW);
                payloadLeft = value;
            } else {
                listener.onRecord(type, value);
            }
        }
        dropAbandonedHead();
    }

    private static String checkHeader(int magic, int type, int flags, long value) {
        if (magic != Frame.MAGIC) {
            return "a frame without the frame magic (stray or corrupt bytes)";
        }
        if (flags != 0) {
            return "a frame with unknown flags";
        }
        if (type == Frame.DATA && (value < 0 || value > Frame.MAX_MESSAGE_BYTES)) {
            return "a message length of " + value + " bytes";
        }
        return null;
    }

    private void breakFraming(String what) {
        malformed = what;
        handler = null;
        listener.onMalformed("sent " + what);
    }

}
