package io.ringstar.spi;

import java.util.concurrent.locks.LockSupport;

/**
 * The body of a {@link PeerTransport}'s background thread: once no call has been in progress for
 * {@value WaitSchedule#HANDOVER_NANOS} ns it takes the I/O lock and keeps reading, so a peer's
 * sends do not stall on a rank that computes; a call that arrives wakes it and takes the lock back.
 * After each round it answers the status queries that came ({@link TransportProbe}), so a rank that
 * computes, or is stuck outside ringstar, still answers. Started and owned by the transport's
 * {@link ProgressEngine}; ends when the transport closes.
 */
final class BackgroundReader implements Runnable {
    private static final System.Logger LOG = System.getLogger(PeerTransport.class.getName());

    private final ProgressEngine engine;

    BackgroundReader(ProgressEngine engine) {
        this.engine = engine;
    }

    @Override
    public void run() {
        while (!engine.closed) {
            long idle = System.nanoTime() - engine.lastCallEnded();
            if (engine.inCall() || idle < WaitSchedule.HANDOVER_NANOS) {
                LockSupport.parkNanos(engine.owner, engine.inCall() ? WaitSchedule.HANDOVER_NANOS
                        : WaitSchedule.HANDOVER_NANOS - idle);
                continue;
            }
            if (!engine.io.tryLock()) {
                LockSupport.parkNanos(engine.owner, WaitSchedule.HANDOVER_NANOS);
                continue;
            }
            try {
                while (!engine.closed && !engine.inCall()) {
                    engine.backgroundRound(ProgressEngine.BACKGROUND_BLOCK_NANOS);
                    if (engine.repliesOwed) {
                        // Between calls, this thread is the one that answers peers' status queries.
                        engine.exchange.answerOwed();
                    }
                }
            } catch (RuntimeException | Error failure) {
                LOG.log(System.Logger.Level.ERROR, "rank " + engine.rank + "'s " + engine.name
                        + " reader failed: " + failure);
                engine.failAll("the background reader of rank " + engine.rank + " failed: " + failure, failure);
                return;
            } finally {
                engine.io.unlock();
            }
        }
    }
}
