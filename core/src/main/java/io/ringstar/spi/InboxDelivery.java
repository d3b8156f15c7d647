package io.ringstar.spi;

import io.ringstar.Transport.MessageHandler;
import java.nio.ByteBuffer;

/**
 * The receiver's side of an {@link Inbox}: the attached handler, and handing it what has arrived
 * of the head message (as views of the storage, or of an offered piece), finishing the message
 * once it is whole, dropping what arrives of one its receiver gave up. A handler's exception is
 * kept here, never thrown into the I/O code. The middle layer of {@link Inbox}, which extends it
 * and owns it (a superclass rather than a field: see {@link InboxStorage}). Not thread-safe.
 */
abstract class InboxDelivery extends InboxStorage {
    MessageHandler handler;
    /** Length of the message the handler finished with, or -1. */
    int completed = -1;
    RuntimeException handlerFailure;

    InboxDelivery(int initialBytes, long limitBytes) {
        super(initialBytes, limitBytes);
    }

    /** Hands the attached handler what has arrived of the head message. */
    final void deliver() {
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

    /** An offered DATA header for the attached handler: starts the message without storing it. */
    final boolean startDirect(int length) {
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

    /** Calls the handler for {@code count} bytes of {@code view} at {@code at}; a throw abandons the message. */
    final void handOver(ByteBuffer view, int at, int count, int messageOffset) {
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
    final void finishHeadIfDone() {
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
    final void dropAbandonedHead() {
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
}
