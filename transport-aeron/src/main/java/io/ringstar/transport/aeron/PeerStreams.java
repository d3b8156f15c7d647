package io.ringstar.transport.aeron;

import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.ringstar.spi.Frame;
import io.ringstar.spi.PeerChannel;

/**
 * One peer's two Aeron streams as set up and watched, apart from moving bytes over them, which
 * {@link AeronChannel} (the one subclass) does: which sessions and medium (IPC or UDP) they use,
 * the records that end forming the group and closing ({@link #READY}, {@link #GOODBYE_ACK}), and
 * how the peer is found gone: its image went away, its stream stayed unconnected for the liveness
 * timeout, or the {@link Sentinels} reported its death.
 *
 * <p>The fields the subclass's reading and writing code use are package-private here, so that code
 * reads them directly, as it did when they were its own.
 */
abstract class PeerStreams extends PeerChannel {
    /** Sent once the sender sees every stream of the group connected; ends forming the group. */
    static final int READY = Frame.FIRST_TRANSPORT_TYPE;
    /** The sender has read the peer's goodbye, so everything sent before it has arrived. */
    static final int GOODBYE_ACK = Frame.FIRST_TRANSPORT_TYPE + 1;

    private final int sessionIn;
    private final boolean ipc;
    /** The stream this rank sends to the peer on. */
    final ExclusivePublication publication;
    /** The stream this rank receives from the peer, once it is here. */
    volatile Image image;

    private boolean ready;
    private boolean goodbyeAcknowledged;
    /** The peer said goodbye and has not been told yet that it arrived; the subclass's poll tells it. */
    boolean acknowledgementOwed;
    /** The peer's death was reported (its sentinel connection closed): fail it once its image is drained. */
    String deathReported;
    /** When the publication was first seen without a subscriber, or 0 while it has one. */
    private long unconnectedSince;

    PeerStreams(AeronTransport transport, int peer, int sessionIn, boolean ipc, ExclusivePublication publication,
            long receiveBufferBytes) {
        super(transport, peer, 64 << 10, receiveBufferBytes);
        this.sessionIn = sessionIn;
        this.ipc = ipc;
        this.publication = publication;
    }

    final int sessionIn() {
        return sessionIn;
    }

    final boolean ipc() {
        return ipc;
    }

    final boolean hasImage() {
        return image != null;
    }

    final void image(Image arrived) {
        this.image = arrived;
    }

    final boolean publicationConnected() {
        return publication.isConnected();
    }

    final boolean ready() {
        return ready;
    }

    final boolean goodbyeAcknowledged() {
        return goodbyeAcknowledged;
    }

    @Override
    protected final void onTransportRecord(int type, long value) {
        switch (type) {
            case READY -> ready = true;
            case GOODBYE_ACK -> goodbyeAcknowledged = true;
            default -> super.onTransportRecord(type, value);
        }
    }

    @Override
    protected final void onGoodbye() {
        acknowledgementOwed = true;
    }

    /** The peer's image went away: it closed, died, or was unreachable for the liveness timeout. */
    final void onImageGone(String livenessTimeout) {
        fail(peerClosed() ? "rank " + peer + " closed its transport"
                : "rank " + peer + "'s stream went away (its process or media driver stopped, or it was unreachable"
                        + " for longer than " + livenessTimeout + ")", null);
    }

    /** The peer died (its sentinel connection closed): it is failed once what it sent is read. */
    final void deathReported(String why) {
        if (deathReported == null && !peerClosed()) {
            deathReported = why;
        }
    }

    /** Checks the publication still has a subscriber; gone for the liveness timeout means the peer is. */
    final void checkConnected(long now, long livenessNanos) {
        if (failure() != null || peerClosed()) {
            return;
        }
        if (publication.isConnected()) {
            unconnectedSince = 0;
        } else if (unconnectedSince == 0) {
            unconnectedSince = now;
        } else if (now - unconnectedSince > livenessNanos) {
            fail("the stream to rank " + peer + " stayed unconnected for longer than the liveness timeout of "
                    + livenessNanos / 1_000_000 + " ms", null);
        }
    }

    @Override
    protected final void closeChannel() {
        // The publication and image belong to the Aeron client, which the transport closes after.
    }
}
