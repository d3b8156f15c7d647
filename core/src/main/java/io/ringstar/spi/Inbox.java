package io.ringstar.spi;

import io.ringstar.Transport.MessageHandler;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

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
 */
public final class Inbox {
    /** What the inbox tells its owner about the stream. */
    public interface Listener {
        /** A control record (any type but {@link Frame#DATA}) arrived. */
        void onRecord(int type, long value);

        /** The stream broke its framing; {@code what} says how. Nothing more is read. */
        void onMalformed(String what);
    }

    private static final byte NEW = 0;
    private static final byte STARTED = 1;
    /** Its receiver gave up after part of it was handed over: the rest is dropped as it comes. */
    private static final byte ABANDONED = 2;
    /** Free space at the storage's end below which it is compacted or grown before a read. */
    private static final int MIN_READ_SPACE = 64 << 10;

    private final Listener listener;
    private final int initialBytes;
    private final long limitBytes;

    private ByteBuffer storage;
    /** Read-only view of {@link #storage} handed to handlers; emptied after every call. */
    private ByteBuffer storageView;
    /** End of the bytes in the storage. */
    private int writePos;
    /** First stored byte not parsed yet. */
    private int parsePos;
    /** Payload bytes of the newest message that have not arrived yet. */
    private long payloadLeft;
    private String malformed;

    // Queued messages, oldest first, in a ring of parallel arrays (no object per message).
    /** Storage offset of the message's next byte not handed over (meaningful for stored bytes). */
    private int[] queueAt = new int[16];
    private int[] queueLength = new int[16];
    /** Bytes of the message handed over (or dropped) so far. */
    private int[] queueDone = new int[16];
    /** Bytes of the message that have arrived so far. */
    private int[] queueArrived = new int[16];
    private byte[] queueState = new byte[16];
    private int queueHead;
    private int queueCount;

    private MessageHandler handler;
    /** Length of the message the handler finished with, or -1. */
    private int completed = -1;
    private RuntimeException handlerFailure;

    /**
     * @param initialBytes the storage's first size; it grows when more must wait
     * @param limitBytes bytes that may wait to be taken before the transport stops reading
     */
    public Inbox(Listener listener, int initialBytes, long limitBytes) {
        this.listener = listener;
        this.initialBytes = Math.max(MIN_READ_SPACE, initialBytes);
        this.limitBytes = Math.max(limitBytes, 2L * Frame.HEADER_BYTES);
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

    /** An offered DATA header for the attached handler: starts the message without storing it. */
    private boolean startDirect(int length) {
        try {
            handler.onStart(length);
        } catch (RuntimeException e) {
            // The message stays queued: the header goes into the storage like any other.
            handlerFailure = e;
            handler = null;
            return false;
        }
        push(length, writePos, STARTED);
        payloadLeft = length;
        finishHeadIfDone();
        return true;
    }

    // ---- delivery ----

    /** Hands the attached handler what has arrived of the head message. */
    private void deliver() {
        dropAbandonedHead();
        if (handler == null || queueCount == 0) {
            return;
        }
        int head = queueHead;
        if (queueState[head] == NEW) {
            try {
                handler.onStart(queueLength[head]);
            } catch (RuntimeException e) {
                handlerFailure = e;
                handler = null;
                return;
            }
            queueState[head] = STARTED;
        }
        int available = queueArrived[head] - queueDone[head];
        if (available > 0) {
            int offset = queueDone[head];
            int at = queueAt[head];
            queueAt[head] += available;
            queueDone[head] += available;
            handOver(storageView, at, available, offset);
        }
        finishHeadIfDone();
    }

    /** Calls the handler for {@code count} bytes of {@code view} at {@code at}; a throw abandons the message. */
    private void handOver(ByteBuffer view, int at, int count, int messageOffset) {
        MessageHandler receiver = handler;
        try {
            view.limit(at + count).position(at);
            receiver.onBytes(view, messageOffset);
        } catch (RuntimeException e) {
            handlerFailure = e;
            handler = null;
            if (queueCount > 0) {
                queueState[queueHead] = ABANDONED;
            }
        } finally {
            view.limit(0);
        }
    }

    /** Pops the head message once all of it has been handed over (or dropped). */
    private void finishHeadIfDone() {
        if (queueCount == 0) {
            return;
        }
        int head = queueHead;
        if (queueDone[head] != queueLength[head]) {
            return;
        }
        if (queueState[head] == STARTED && handler != null) {
            completed = queueLength[head];
            handler = null;
        } else if (queueState[head] != ABANDONED) {
            return;
        }
        pop();
    }

    /** Drops what has arrived of an abandoned head message; pops it once it is all here. */
    private void dropAbandonedHead() {
        while (queueCount > 0 && queueState[queueHead] == ABANDONED) {
            int head = queueHead;
            int stored = queueArrived[head] - queueDone[head];
            queueAt[head] += stored;
            queueDone[head] = queueArrived[head];
            if (queueDone[head] != queueLength[head]) {
                break;
            }
            pop();
        }
        resetIfEmpty();
    }

    // ---- the queue ----

    private int tailIndex() {
        return (queueHead + queueCount - 1) & (queueLength.length - 1);
    }

    private void push(int length, int at, byte state) {
        if (queueCount == queueLength.length) {
            growQueue();
        }
        int index = (queueHead + queueCount) & (queueLength.length - 1);
        queueAt[index] = at;
        queueLength[index] = length;
        queueDone[index] = 0;
        queueArrived[index] = 0;
        queueState[index] = state;
        queueCount++;
    }

    private void pop() {
        queueHead = (queueHead + 1) & (queueLength.length - 1);
        queueCount--;
        resetIfEmpty();
    }

    private void growQueue() {
        int capacity = queueLength.length;
        int[] at = new int[capacity * 2];
        int[] length = new int[capacity * 2];
        int[] done = new int[capacity * 2];
        int[] arrived = new int[capacity * 2];
        byte[] state = new byte[capacity * 2];
        for (int i = 0; i < queueCount; i++) {
            int from = (queueHead + i) & (capacity - 1);
            at[i] = queueAt[from];
            length[i] = queueLength[from];
            done[i] = queueDone[from];
            arrived[i] = queueArrived[from];
            state[i] = queueState[from];
        }
        queueAt = at;
        queueLength = length;
        queueDone = done;
        queueArrived = arrived;
        queueState = state;
        queueHead = 0;
    }

    // ---- the storage ----

    private long allowance(boolean sending) {
        return sending ? 2 * limitBytes : limitBytes;
    }

    /** First stored byte still needed: the head message's next byte, or the first unparsed byte. */
    private int liveStart() {
        // Later messages and parsed records lie after the head message's next byte.
        return queueCount > 0 ? Math.min(queueAt[queueHead], parsePos) : parsePos;
    }

    /** Once nothing stored is needed any more, the next bytes go to the storage's start again. */
    private void resetIfEmpty() {
        if (writePos != 0 && liveStart() == writePos) {
            shift(writePos);
        }
    }

    /** Moves every stored position down by {@code delta} (the bytes below are no longer needed). */
    private void shift(int delta) {
        writePos -= delta;
        parsePos -= delta;
        for (int i = 0; i < queueCount; i++) {
            int index = (queueHead + i) & (queueLength.length - 1);
            queueAt[index] = Math.max(0, queueAt[index] - delta);
        }
    }

    /** Makes at least some free space at the storage's end: compacts, then grows, within {@code wanted}. */
    private void makeRoom(int wanted) {
        if (storage == null) {
            allocate(initialBytes);
        }
        int free = storage.capacity() - writePos;
        if (free >= Math.min(MIN_READ_SPACE, wanted)) {
            return;
        }
        int live = liveStart();
        if (live > 0) {
            compact(live);
            free = storage.capacity() - writePos;
            if (free >= Math.min(MIN_READ_SPACE, wanted)) {
                return;
            }
        }
        long grown = Math.max(2L * storage.capacity(), (long) writePos + Math.min(MIN_READ_SPACE, wanted));
        allocate((int) Math.min(grown, Integer.MAX_VALUE - 64));
    }

    /** Moves the needed bytes, from {@code live} on, to the storage's start. */
    private void compact(int live) {
        storage.clear();
        // One buffer to itself: the bulk put copies as memmove does, overlap and all.
        storage.put(0, storage, live, writePos - live);
        shift(live);
    }

    private void allocate(int capacity) {
        ByteBuffer next = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
        if (storage != null && writePos > 0) {
            next.put(0, storage, 0, writePos);
        }
        storage = next;
        storageView = next.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
        storageView.limit(0);
    }

    /** Copies {@code count} bytes of {@code piece} from {@code at} to the storage's end. */
    private void append(ByteBuffer piece, int at, int count) {
        if (storage == null || storage.capacity() - writePos < count) {
            int live = storage == null ? 0 : liveStart();
            if (live > 0) {
                compact(live);
            }
            if (storage == null || storage.capacity() - writePos < count) {
                long needed = (long) writePos + count;
                long capacity = storage == null ? initialBytes : storage.capacity();
                while (capacity < needed) {
                    capacity *= 2;
                }
                allocate((int) Math.min(capacity, Integer.MAX_VALUE - 64));
            }
        }
        storage.clear();
        storage.put(writePos, piece, at, count);
        writePos += count;
    }
}
