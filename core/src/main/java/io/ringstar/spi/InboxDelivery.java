package io.ringstar.spi;

import io.ringstar.Transport.MessageHandler;
import java.nio.ByteBuffer;

/**
 * The receiver's side of an {@link Inbox}: the attached handler, and handing it what has arrived
 * of the head message (as views of the storage, or of an offered piece), finishing the message
 * once it is whole, dropping what arrives of one its receiver gave up. A handler's exception is
 * kept here, never thrown into the I/O code. Owned by its {@link Inbox}, which parses the stream
 * into the {@link InboxStorage} this reads from. Not thread-safe.
 */
final class InboxDelivery {
    private final InboxStorage store;
    MessageHandler handler;
    /** Length of the message the handler finished with, or -1. */
    int completed = -1;
    RuntimeException handlerFailure;

    InboxDelivery(InboxStorage store) {
        this.store = store;
    }

    /** See {@link Inbox#attach}. */
    void attach(MessageHandler receiver) {
        handler = receiver;
        completed = -1;
        deliver();
    }

    /** See {@link Inbox#detach}. */
    void detach(boolean abandon) {
        handler = null;
        // No receiver is served any more: a transport that stops polling once it is (Aeron) reads
        // at full pace again.
        completed = -1;
        if (abandon && store.queueCount > 0 && store.queueState[store.queueHead] == InboxStorage.STARTED) {
            store.queueState[store.queueHead] = InboxStorage.ABANDONED;
            dropAbandonedHead();
        }
    }

    /** The exception the last handler threw, once, or null. */
    RuntimeException takeFailure() {
        RuntimeException failure = handlerFailure;
        handlerFailure = null;
        return failure;
    }

    /** Hands the attached handler what has arrived of the head message. */
    void deliver() {
        dropAbandonedHead();
        if (handler == null || store.queueCount == 0) {
            return;
        }
        int head = store.queueHead;
        if (store.queueState[head] == InboxStorage.NEW) {
            try {
                handler.onStart(store.queueLength[head]);
            } catch (RuntimeException e) {
                handlerFailure = e;
                handler = null;
                return;
            }
            store.queueState[head] = InboxStorage.STARTED;
        }
        int available = store.queueArrived[head] - store.queueDone[head];
        if (available > 0) {
            int offset = store.queueDone[head];
            int at = store.queueAt[head];
            store.queueAt[head] += available;
            store.queueDone[head] += available;
            handOver(store.storageView, at, available, offset);
        }
        finishHeadIfDone();
    }

    /** An offered DATA header for the attached handler: starts the message without storing it. */
    boolean startDirect(int length) {
        try {
            handler.onStart(length);
        } catch (RuntimeException e) {
            // The message stays queued: the header goes into the storage like any other.
            handlerFailure = e;
            handler = null;
            return false;
        }
        store.push(length, store.writePos, InboxStorage.STARTED);
        store.payloadLeft = length;
        finishHeadIfDone();
        return true;
    }

    /** Calls the handler for {@code count} bytes of {@code view} at {@code at}; a throw abandons the message. */
    void handOver(ByteBuffer view, int at, int count, int messageOffset) {
        MessageHandler receiver = handler;
        try {
            view.limit(at + count).position(at);
            receiver.onBytes(view, messageOffset);
        } catch (RuntimeException e) {
            handlerFailure = e;
            handler = null;
            if (store.queueCount > 0) {
                store.queueState[store.queueHead] = InboxStorage.ABANDONED;
            }
        } finally {
            view.limit(0);
        }
    }

    /** Pops the head message once all of it has been handed over (or dropped). */
    void finishHeadIfDone() {
        if (store.queueCount == 0) {
            return;
        }
        int head = store.queueHead;
        if (store.queueDone[head] != store.queueLength[head]) {
            return;
        }
        if (store.queueState[head] == InboxStorage.STARTED && handler != null) {
            completed = store.queueLength[head];
            handler = null;
        } else if (store.queueState[head] != InboxStorage.ABANDONED) {
            return;
        }
        store.pop();
    }

    /** Drops what has arrived of an abandoned head message; pops it once it is all here. */
    void dropAbandonedHead() {
        while (store.queueCount > 0 && store.queueState[store.queueHead] == InboxStorage.ABANDONED) {
            int head = store.queueHead;
            int stored = store.queueArrived[head] - store.queueDone[head];
            store.queueAt[head] += stored;
            store.queueDone[head] = store.queueArrived[head];
            if (store.queueDone[head] != store.queueLength[head]) {
                break;
            }
            store.pop();
        }
        store.resetIfEmpty();
    }
}
