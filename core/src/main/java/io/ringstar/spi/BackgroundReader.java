package io.ringstar.spi;

import java.util.concurrent.locks.LockSupport;

/**
 * The body of a {@link PeerTransport}'s background thread: once no call has been in progress for
 * {@value ProgressEngine#HANDOVER_NANOS} ns it takes the I/O lock and keeps reading, so a peer's
 * sends do not stall on a rank that computes; a call that arrives wakes it and takes the lock back.
 * Started and owned by the transport's {@link ProgressEngine}; ends when the transport closes.
 */
final class BackgroundReader implements Runnable {
    private static final System.Logger LOG = System.getLogger(PeerTransport.class.getName());

    private final ProgressEngine transport;

    BackgroundReader(ProgressEngine transport) {
        this.transport = transport;
    }

    @Override
    public void run() {
        while (!transport.closed) {
            long idle = System.nanoTime() - transport.lastCallEnded();
            if (transport.inCall() || idle < ProgressEngine.HANDOVER_NANOS) {
                LockSupport.parkNanos(transport, transport.inCall() ? ProgressEngine.HANDOVER_NANOS
                        : ProgressEngine.HANDOVER_NANOS - idle);
                continue;
            }
            if (!transport.io.tryLock()) {
                LockSupport.parkNanos(transport, ProgressEngine.HANDOVER_NANOS);
                continue;
            }
            try {
                while (!transport.closed && !transport.inCall()) {
                    transport.progress(ProgressEngine.BACKGROUND_BLOCK_NANOS);
                }
            } catch (RuntimeException | Error failure) {
                LOG.log(System.Logger.Level.ERROR, "rank " + transport.rank + "'s " + transport.name
                        + " reader failed: " + failure);
                transport.failAll("the background reader of rank " + transport.rank + " failed: " + failure, failure);
                return;
            } finally {
                transport.io.unlock();
            }
        }
    }
}
