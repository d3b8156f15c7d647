package io.ringstar.transport.aeron;

import io.ringstar.Deadline;

/**
 * Aeron's part of closing an {@link AeronTransport}, in the two places core's close sequence
 * leaves to it: after the goodbyes, wait until every peer has acknowledged its goodbye and say BYE
 * on the sentinels ({@link #finishGoodbyes}); last, close the sentinels, the client and the driver,
 * in that order ({@link #release}).
 */
final class Closing {
    private Closing() {
    }

    /**
     * Waits (a few seconds at most) until every peer told goodbye has read everything this rank
     * sent, which it says with an acknowledgement: the driver must keep the streams until then.
     * Then tells the sentinels this is a goodbye, not a death. Under the I/O lock.
     */
    static void finishGoodbyes(AeronTransport transport, AeronChannel[] peers, Sentinels sentinels,
            Deadline deadline) {
        long waitStart = System.nanoTime();
        while (!deadline.passed()) {
            boolean all = true;
            for (AeronChannel peer : peers) {
                if (peer != null && !peer.streams.goodbyeAcknowledged() && !peer.gone()) {
                    all = false;
                }
            }
            if (all) {
                break;
            }
            if (transport.awaitRound(waitStart, deadline, null, null) > 0) {
                waitStart = System.nanoTime();
            }
        }
        if (sentinels != null) {
            sentinels.sayBye();
        }
    }

    /**
     * Closes the sentinels, then the client and the driver once no caller is inside a stream's
     * buffers: the client unmaps them, and a thread polling an image or inside a claim would then
     * touch unmapped memory and crash the JVM. A thread that did not leave in time gets the
     * client's close linger instead, so it finishes in mapped memory and sees the streams closed.
     * Either may be null (a group of one, or a set-up that failed before it).
     */
    static void release(Sentinels sentinels, DriverHandle driver, boolean othersMayBeInside) {
        if (sentinels != null) {
            sentinels.close();
        }
        if (driver != null) {
            driver.close(othersMayBeInside);
        }
    }
}
