package io.ringstar.spi;

import io.ringstar.Deadline;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * The records a {@link PeerTransport} exchanges beside the messages for its {@link TransportProbe}:
 * status queries and their replies, and failure reports; what this rank answers with, and who hears
 * of peers' failures. Owned by the transport's {@code ProgressEngine}, whose I/O lock guards every
 * write here and the replies owed ({@link PeerChannel#replyOwed}); the settings are volatile, read by
 * any thread.
 *
 * <p>Each write is one {@link Frame} header, bounded by a short deadline of its own and never thrown:
 * these records serve the diagnosis of a group, which must not fail because of them. A write that
 * gives up after part of its frame went out fails its peer, as any {@link PeerChannel#writeFrame}
 * does.
 */
final class StatusExchange {
    /** The most an owed status reply waits for its peer to take it. */
    static final Duration REPLY_LIMIT = Duration.ofSeconds(1);
    /** The most a status query waits for its peer to take it. */
    static final Duration QUERY_LIMIT = Duration.ofSeconds(1);
    /** The most a failure report waits for each peer, and for the I/O lock (as a collective's abort message does). */
    static final Duration REPORT_LIMIT = Duration.ofSeconds(2);
    /**
     * The most {@link #ask} waits for the I/O lock when its thread does not hold it: long enough for a
     * caller that blocks in its wait to let go (it does when another thread queues), short enough
     * that a thread which asks on a timer is not held up by a busy rank.
     */
    static final long ASK_LOCK_NANOS = 5_000_000;

    private static final System.Logger LOG = System.getLogger(PeerTransport.class.getName());

    private final ProgressEngine engine;
    private volatile LongSupplier status;
    private volatile TransportProbe.PeerEvents listener;

    StatusExchange(ProgressEngine engine) {
        this.engine = engine;
    }

    // ---- settings ----

    /** See {@link TransportProbe#answerStatusWith}. */
    void answerWith(LongSupplier supplier) {
        status = supplier;
    }

    /** See {@link TransportProbe#listen}. */
    void listen(TransportProbe.PeerEvents events) {
        listener = events;
    }

    /**
     * What this rank answers now: the supplier's value, or {@link TransportProbe#NO_STATUS} without
     * one or if it threw (the answer is best effort, and the thread calling it may be the
     * background reader, which must not die of it).
     */
    long statusToAnswer() {
        LongSupplier supplier = status;
        if (supplier == null) {
            return TransportProbe.NO_STATUS;
        }
        try {
            return supplier.getAsLong();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rank " + engine.rank + "'s status supplier threw: " + e);
            return TransportProbe.NO_STATUS;
        }
    }

    // ---- events ----

    /** Tells the listener that {@code peer} failed; a listener's exception is logged, never thrown into the I/O. */
    void peerFailed(int peer, String reason) {
        TransportProbe.PeerEvents events = listener;
        if (events == null) {
            return;
        }
        try {
            events.peerFailed(peer, reason);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rank " + engine.rank
                    + "'s peer listener threw on the failure of rank " + peer + ": " + e);
        }
    }

    /** Tells the listener that {@code peer} reported the group's failure on {@code originRank}. */
    void failureReported(int peer, int originRank) {
        TransportProbe.PeerEvents events = listener;
        if (events == null) {
            return;
        }
        try {
            events.failureReported(peer, originRank);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rank " + engine.rank + "'s peer listener threw on rank " + peer
                    + "'s failure report: " + e);
        }
    }

    // ---- records ----

    /**
     * Writes the status replies owed, at a safe point of the I/O lock's holder: not on a channel in
     * the middle of a frame (it stays owed until the next safe point), not after close. The caller
     * has detached any handler of its own, since a write that waits may let another thread drive
     * the I/O.
     */
    void answerOwed() {
        engine.repliesOwed = false;
        if (engine.closed) {
            return;
        }
        boolean deferred = false;
        boolean computed = false;
        long answer = TransportProbe.NO_STATUS;
        for (PeerChannel channel : engine.channels) {
            if (channel == null || !channel.replyOwed) {
                continue;
            }
            if (channel.sending()) {
                deferred = true;
                continue;
            }
            channel.replyOwed = false;
            if (channel.gone()) {
                continue;
            }
            if (!computed) {
                answer = statusToAnswer();
                computed = true;
            }
            write(channel, Frame.STATUS_REPLY, answer, REPLY_LIMIT, "statusReply");
        }
        if (deferred) {
            engine.repliesOwed = true;
        }
    }

    /** See {@link TransportProbe#askStatus}. */
    long ask() {
        long askedAt = System.nanoTime();
        if (engine.closed) {
            return askedAt;
        }
        boolean held = engine.io.isHeldByCurrentThread();
        boolean locked = held;
        boolean lockRefused = false;
        try {
            for (PeerChannel channel : engine.channels) {
                if (channel == null || channel.gone()) {
                    continue;
                }
                long direct = engine.owner.statusWithoutAsking(channel.peer());
                if (direct != TransportProbe.NO_ANSWER) {
                    channel.storeStatus(direct, System.nanoTime());
                    continue;
                }
                if (!locked && !lockRefused) {
                    locked = engine.lockBriefly(ASK_LOCK_NANOS);
                    lockRefused = !locked;
                }
                if (locked && !engine.closed && !channel.sending()) {
                    write(channel, Frame.STATUS_QUERY, 0, QUERY_LIMIT, "askStatus");
                }
            }
        } finally {
            if (locked && !held) {
                engine.exit();
            }
        }
        return askedAt;
    }

    /** See {@link TransportProbe#reportFailure}. */
    void report(int originRank) {
        if (engine.closed) {
            return;
        }
        boolean held = engine.io.isHeldByCurrentThread();
        if (!held && !engine.lockBriefly(REPORT_LIMIT.toNanos())) {
            LOG.log(System.Logger.Level.DEBUG, "rank " + engine.rank + " could not report the failure on rank "
                    + originRank + ": its transport stayed busy");
            return;
        }
        try {
            for (PeerChannel channel : engine.channels) {
                if (channel != null && !channel.gone() && !channel.sending() && !engine.closed) {
                    write(channel, Frame.FAILURE_REPORT, originRank, REPORT_LIMIT, "reportFailure");
                }
            }
        } finally {
            if (!held) {
                engine.exit();
            }
        }
    }

    /** Writes one record to {@code channel} within {@code limit} (the timeout if shorter); never throws. */
    private void write(PeerChannel channel, int type, long value, Duration limit, String operation) {
        Duration timeout = engine.owner.timeout();
        Deadline deadline = Deadline.after(timeout.compareTo(limit) < 0 ? timeout : limit);
        try {
            channel.send(type, value, MessageCopy.NO_BYTES, MessageCopy.NO_BYTES, deadline, operation);
        } catch (RuntimeException e) {
            // A peer that cannot be told now is skipped: it is failed, or late, and its own
            // waits and liveness say so; a frame cut short has failed it already.
            LOG.log(System.Logger.Level.DEBUG, "rank " + engine.rank + " could not send " + Frame.typeName(type)
                    + " to rank " + channel.peer() + ": " + e.getMessage());
        }
    }
}
