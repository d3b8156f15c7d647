package io.ringstar.spi;

import io.ringstar.Deadline;
import java.util.function.LongSupplier;

/**
 * What a transport tells the collectives above it about its waits, and the small status exchange
 * that lets a waiting rank ask every peer how far it got: the hooks of ringstar's observability
 * ({@code io.ringstar.observe}). {@link PeerTransport} implements it for every transport built on
 * it; a transport that does not is simply not observed this closely.
 *
 * <p><b>Status exchange.</b> Each rank publishes its status as one packed {@code long}
 * ({@link #answerStatusWith}); {@link #askStatus} sends a query record to every peer, and each
 * peer's transport answers it without its application's help (the background reader between
 * calls, a waiting call's own thread during one), so a peer that is computing, or stuck outside
 * ringstar altogether, still answers. A peer whose process is stopped does not, and
 * {@link #statusOf} says so with {@link #NO_ANSWER}. The records travel beside the messages and
 * never mix with them.
 */
public interface TransportProbe {
    /** {@link #statusOf}: no answer from the peer since the query (or no query yet). */
    long NO_ANSWER = -1L;
    /** What a rank answers before {@link #answerStatusWith} was set. */
    long NO_STATUS = 0L;

    /**
     * Nanoseconds this transport's calls have spent waiting for peers so far: receives and
     * barriers from the moment they first had to wait until they ended, or until now for those
     * still waiting, summed over threads. The difference across a collective is how long it
     * waited; taken while it runs, how long it has waited so far (a dump of a hung call shows it).
     */
    long waitedNanos();

    /** The peer a receive of this transport waits for right now, or -1 if none waits. */
    int waitingOn();

    /**
     * Sets what this rank answers a peer's status query with. The supplier is called by whichever
     * thread answers (the background reader, a waiting caller), with the I/O lock held: it must be
     * quick, must not block and must not call this transport. Its value must not be
     * {@link #NO_ANSWER}. Null answers {@link #NO_STATUS}.
     */
    void answerStatusWith(LongSupplier status);

    /**
     * Sets the watcher a long wait calls: every round of a receive's, a barrier's or a held-back
     * send's wait once it blocks (after its spinning and yielding phases, so about every millisecond at most), on the
     * waiting thread, with the I/O lock held. Null removes it.
     */
    void watchWaits(WaitWatcher watcher);

    /**
     * Sends a status query to every peer that is still there, best effort (a peer that cannot be
     * asked now, one this rank is in the middle of writing a message to, is skipped), and returns
     * the time of asking by {@link System#nanoTime()}, for {@link #statusOf}. May be called from
     * a {@link WaitWatcher} or from any thread not inside this transport (it then takes the I/O
     * lock, at most briefly). Never throws for a peer's failure.
     */
    long askStatus();

    /**
     * The status {@code peer} answered with after {@code askedAtNanos}
     * ({@link #askStatus}'s result), or {@link #NO_ANSWER} if none came yet.
     */
    long statusOf(int peer, long askedAtNanos);

    /**
     * Tells every peer, with a record beside the messages, that the group failed, first on
     * {@code originRank}: so that a peer that is in no call, whose background reader only stores
     * the collective's abort message, still learns of it ({@link PeerEvents#failureReported}).
     * Best effort and bounded (each peer at most a short while); never throws.
     */
    void reportFailure(int originRank);

    /** Sets who hears of peer failures and reported failures; null removes it. */
    void listen(PeerEvents listener);

    /**
     * {@link io.ringstar.Transport#barrier()} bounded by {@code deadline} instead of the
     * transport's timeout: when it passes, the {@link io.ringstar.CollectiveTimeoutException}
     * lists every rank that did not arrive.
     */
    void barrier(Deadline deadline);

    /** Called by a long wait; see {@link #watchWaits}. */
    @FunctionalInterface
    interface WaitWatcher {
        /**
         * A call of {@code transport} is waiting and has begun to block. Must be quick; may call
         * {@link TransportProbe#askStatus} and {@link TransportProbe#statusOf}; exceptions are
         * not caught.
         */
        void waiting(TransportProbe transport);
    }

    /**
     * Hears of peers' failures as the transport learns of them, on whichever thread learns (the
     * background reader, a caller, a peer's thread in the same process), possibly with the I/O
     * lock held: must be quick and must not call the transport.
     */
    interface PeerEvents {
        /** {@code peer} is gone (its connection closed or broke, it went silent past liveness): once per peer. */
        void peerFailed(int peer, String reason);

        /** {@code peer} reported that the group failed, first on {@code originRank} ({@link #reportFailure}). */
        void failureReported(int peer, int originRank);
    }
}
