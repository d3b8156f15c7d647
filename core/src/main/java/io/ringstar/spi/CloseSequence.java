package io.ringstar.spi;

import io.ringstar.Deadline;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The steps of {@link PeerTransport#close()} once the transport is marked closed, in their order and
 * each bounded in time: wake every waiter, let the background reader end, take the I/O lock (for
 * at most about a second), say goodbye to every peer still there, let the transport finish what
 * its peers must hear, close the channels (and unmap their shared-memory rings if the lock was
 * taken and the background reader ended), and release the rest. Run once, by the closing thread;
 * owned by {@link PeerTransport}.
 */
final class CloseSequence {
    /** How long close waits for callers to leave before it frees the I/O resources anyway. */
    static final long CLOSE_LOCK_OUT_NANOS = 1_000_000_000L;
    /** The longest close spends saying goodbye. */
    static final Duration GOODBYE_WAIT = Duration.ofSeconds(2);

    private static final System.Logger LOG = System.getLogger(PeerTransport.class.getName());

    private CloseSequence() {
    }

    /**
     * @param started whether the transport's set-up ended ({@code start} ran): only then are there
     *     peers to say goodbye to
     * @param reader the background reader, or null
     */
    static void run(PeerTransport transport, boolean started, Thread reader) {
        transport.engine.wakeAll();
        if (reader != null) {
            try {
                reader.join(TimeUnit.NANOSECONDS.toMillis(CLOSE_LOCK_OUT_NANOS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        IoLock io = transport.engine.io;
        boolean locked = false;
        try {
            locked = io.tryLock(CLOSE_LOCK_OUT_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            if (started) {
                Duration timeout = transport.timeout();
                Deadline goodbye = Deadline.after(timeout.compareTo(GOODBYE_WAIT) < 0 ? timeout : GOODBYE_WAIT);
                if (locked) {
                    sayGoodbye(transport, goodbye);
                    transport.beforeChannelsClose(goodbye);
                }
            }
            // The rings' mappings are freed only when nothing can touch them again: every access to a
            // ring is made under the I/O lock, which this thread holds from here to the end, and the
            // background reader is over. After the unlock, callers find the links without rings.
            // Otherwise they stay mapped until the garbage collector frees them.
            boolean nobodyElse = locked && (reader == null || !reader.isAlive());
            closeChannels(transport, nobodyElse);
        } finally {
            try {
                transport.release(!locked || (reader != null && reader.isAlive()));
            } finally {
                if (locked) {
                    io.unlock();
                }
            }
        }
    }

    private static void sayGoodbye(PeerTransport transport, Deadline deadline) {
        for (PeerChannel channel : transport.engine.channels) {
            if (channel != null && !channel.gone()) {
                try {
                    channel.send(Frame.GOODBYE, 0, MessageCopy.NO_BYTES, MessageCopy.NO_BYTES, deadline, "close");
                } catch (RuntimeException e) {
                    // A peer that cannot be told (it failed meanwhile, say) learns it from the closed stream.
                    LOG.log(System.Logger.Level.DEBUG, "rank " + transport.rank() + " could not say goodbye to rank "
                            + channel.peer() + ": " + e.getMessage());
                }
            }
        }
    }

    private static void closeChannels(PeerTransport transport, boolean unmapRings) {
        for (PeerChannel channel : transport.engine.channels) {
            if (channel != null) {
                channel.inbox.close();
                try {
                    // Before the network: the peer may see the ring closed (its goodbye in it) first.
                    channel.sharedMemory.close(unmapRings);
                    channel.closeChannel();
                } catch (RuntimeException | InternalError e) {
                    // InternalError: a shared-memory ring's file truncated beneath its mapping, raised late.
                    LOG.log(System.Logger.Level.DEBUG, "rank " + transport.rank() + ": closing the channel to rank "
                            + channel.peer() + ": " + e);
                }
            }
        }
    }
}
