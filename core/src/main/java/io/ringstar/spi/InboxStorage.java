package io.ringstar.spi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Where the bytes an {@link Inbox} keeps lie, and how much room they take: one direct buffer (the
 * storage) that grows up to what is needed and is compacted as its head is taken, the positions
 * of what is stored and parsed, and the queue of messages that have begun to arrive, oldest first,
 * each with its storage offset and how much of it has arrived and has been handed over. The
 * bookkeeping part of an {@link Inbox}, which owns it and parses into it; its
 * {@link InboxDelivery} hands from it. Its fields are package-private so that the per-piece code of
 * both reads them directly. Not thread-safe: used under its transport's I/O lock.
 */
final class InboxStorage {
    static final byte NEW = 0;
    static final byte STARTED = 1;
    /** Its receiver gave up after part of it was handed over: the rest is dropped as it comes. */
    static final byte ABANDONED = 2;
    /** Free space at the storage's end below which it is compacted or grown before a read. */
    static final int MIN_READ_SPACE = 64 << 10;

    private final int initialBytes;
    private final long limitBytes;

    ByteBuffer storage;
    /** Read-only view of {@link #storage} handed to handlers; emptied after every call. */
    ByteBuffer storageView;
    /** End of the bytes in the storage. */
    int writePos;
    /** First stored byte not parsed yet. */
    int parsePos;
    /** Payload bytes of the newest message that have not arrived yet. */
    long payloadLeft;

    // Queued messages, oldest first, in a ring of parallel arrays (no object per message).
    /** Storage offset of the message's next byte not handed over (meaningful for stored bytes). */
    int[] queueAt = new int[16];
    int[] queueLength = new int[16];
    /** Bytes of the message handed over (or dropped) so far. */
    int[] queueDone = new int[16];
    /** Bytes of the message that have arrived so far. */
    int[] queueArrived = new int[16];
    byte[] queueState = new byte[16];
    int queueHead;
    int queueCount;

    /**
     * @param initialBytes the storage's first size; it grows when more must wait
     * @param limitBytes bytes that may wait to be taken before the transport stops reading
     */
    InboxStorage(int initialBytes, long limitBytes) {
        this.initialBytes = Math.max(MIN_READ_SPACE, initialBytes);
        this.limitBytes = Math.max(limitBytes, 2L * Frame.HEADER_BYTES);
    }

    int tailIndex() {
        return (queueHead + queueCount - 1) & (queueLength.length - 1);
    }

    void push(int length, int at, byte state) {
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

    void pop() {
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

    long allowance(boolean sending) {
        return sending ? 2 * limitBytes : limitBytes;
    }

    /** First stored byte still needed: the head message's next byte, or the first unparsed byte. */
    int liveStart() {
        // Later messages and parsed records lie after the head message's next byte.
        return queueCount > 0 ? Math.min(queueAt[queueHead], parsePos) : parsePos;
    }

    /** Once nothing stored is needed any more, the next bytes go to the storage's start again. */
    void resetIfEmpty() {
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
    void makeRoom(int wanted) {
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
    void append(ByteBuffer piece, int at, int count) {
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
