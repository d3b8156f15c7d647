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
 * <p>This class parses the stream and is the public face; it owns two parts, each an object of its
 * own: an {@code InboxStorage} keeps the storage and the queue of messages, an
 * {@code InboxDelivery} the attached handler and what is handed to it. They were superclasses of
 * this class; as fields they cost the per-piece code one more final field to reach their state,
 * which did not show in the measurements (see {@code ProgressEngine}).
 */
public final class Inbox {
    /** What the inbox tells its owner about the stream. */
    public interface Listener {
        /** A control record (any type but {@link Frame#DATA}) arrived. */
        void onRecord(int type, long value);

        /** The stream broke its framing; {@code what} says how. Nothing more is read. */
        void onMalformed(String what);
    }

    private final Listener listener;
    private final InboxStorage store;
    private final InboxDelivery delivery;
    private String malformed;

    /**
     * @param initialBytes the storage's first size; it grows when more must wait
     * @param limitBytes bytes that may wait to be taken before the transport stops reading
     */
    public Inbox(Listener listener, int initialBytes, long limitBytes) {
        this.listener = listener;
        this.store = new InboxStorage(initialBytes, limitBytes);
        this.delivery = new InboxDelivery(store);
    }

    // ---- the receiver's side: the skeleton's receive, in this package ----

    /**
     * Gives the head message to {@code handler}: what has arrived of it at once, the rest as it
     * comes, until {@link #completed()} says it is whole or {@link #detach} is called. A message
     * the receiver began earlier continues where it stopped.
     */
    void attach(MessageHandler receiver) {
        delivery.attach(receiver);
    }

    /** The length of the message the attached handler has taken whole, or -1 while it has not. */
    public int completed() {
        return delivery.completed;
    }

    /**
     * Ends the attachment. With {@code abandon}, a head message of which part was handed over is
     * given up: the rest of it is dropped as it arrives, so the next message is intact; without,
     * it waits for the same receiver to attach again.
     */
    void detach(boolean abandon) {
        delivery.detach(abandon);
    }

    /** The exception the last handler threw, once, or null; the receiver rethrows it. */
    RuntimeException takeHandlerFailure() {
        return delivery.takeFailure();
    }

    /** True if nothing of any message is here: no message queued, none half-arrived. */
    public boolean isEmpty() {
        return store.queueCount == 0;
    }

    /** Why the stream broke its framing, or null. */
    public String malformed() {
        return malformed;
    }

    /** Bytes waiting to be taken (or parsed), the figure the limit applies to. */
    long waitingBytes() {
        return store.writePos - store.liveStart();
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
        store.makeRoom((int) Math.min(allowance, Integer.MAX_VALUE - 64));
        int end = (int) Math.min(store.storage.capacity(), store.writePos + allowance);
        store.storage.limit(end).position(store.writePos);
        return store.storage;
    }

    /**
     * Bytes a read may still bring: to the limit, or to the end of a message already begun if that
     * is further (0 when neither allows more, or the stream broke).
     */
    public long room(boolean sending) {
        return malformed != null ? 0
                : Math.max(Math.max(0, store.allowance(sending) - waitingBytes()), store.payloadLeft);
    }

    /** Takes note of {@code count} bytes read into {@link #writable}'s buffer; parses and hands them on. */
    public void stored(int count) {
        if (count <= 0) {
            return;
        }
        store.writePos += count;
        parse();
        delivery.deliver();
    }

    /**
     * Whether {@link #offer} would take a piece of {@code bytes} whole: always when nothing waits
     * (so a peer can always make progress) or the piece belongs to a message already begun, else
     * within the limit.
     */
    public boolean canTake(int bytes, boolean sending) {
        long waiting = waitingBytes();
        return waiting == 0 || bytes <= store.payloadLeft || waiting + bytes <= store.allowance(sending);
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
        while (at < to && malformed == null && store.parsePos == store.writePos) {
            if (store.payloadLeft == 0) {
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
                if (delivery.handler == null || store.queueCount != 0 || !delivery.startDirect((int) value)) {
                    break;
                }
                at += Frame.HEADER_BYTES;
                continue;
            }
            int tail = store.tailIndex();
            int n = (int) Math.min(store.payloadLeft, to - at);
            boolean atHead = tail == store.queueHead;
            byte state = store.queueState[tail];
            if (state == InboxStorage.ABANDONED && atHead) {
                store.queueArrived[tail] += n;
                store.queueDone[tail] += n;
            } else if (delivery.handler != null && atHead && state == InboxStorage.STARTED
                    && store.queueArrived[tail] == store.queueDone[tail]) {
                int offset = store.queueDone[tail];
                store.queueArrived[tail] += n;
                store.queueDone[tail] += n;
                delivery.handOver(piece, at, n, offset);
                piece.limit(piece.capacity());
            } else {
                break;
            }
            store.payloadLeft -= n;
            at += n;
            delivery.finishHeadIfDone();
        }
        if (at < to && malformed == null) {
            store.append(piece, at, to - at);
            parse();
            delivery.deliver();
        }
        piece.limit(0);
    }

    /** Message bytes and records alike are ignored from now on (the peer is failed by its owner). */
    public void close() {
        malformed = malformed == null ? "closed" : malformed;
        delivery.handler = null;
    }

    // ---- parsing ----

    /** Parses the stored bytes not parsed yet: frame headers, records, the newest message's arrival. */
    private void parse() {
        while (store.parsePos < store.writePos && malformed == null) {
            if (store.payloadLeft > 0) {
                int n = (int) Math.min(store.payloadLeft, store.writePos - store.parsePos);
                store.queueArrived[store.tailIndex()] += n;
                store.parsePos += n;
                store.payloadLeft -= n;
                continue;
            }
            if (store.writePos - store.parsePos < Frame.HEADER_BYTES) {
                return;
            }
            int type = Frame.type(store.storage, store.parsePos);
            long value = Frame.value(store.storage, store.parsePos);
            String wrong = checkHeader(Frame.magic(store.storage, store.parsePos), type,
                    Frame.flagsAndReserved(store.storage, store.parsePos), value);
            if (wrong != null) {
                breakFraming(wrong);
                return;
            }
            store.parsePos += Frame.HEADER_BYTES;
            if (type == Frame.DATA) {
                store.push((int) value, store.parsePos, InboxStorage.NEW);
                store.payloadLeft = value;
            } else {
                listener.onRecord(type, value);
            }
        }
        delivery.dropAbandonedHead();
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
        delivery.handler = null;
        listener.onMalformed("sent " + what);
    }

}
