package io.ringstar.transport.aeron;

import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.ringstar.spi.Frame;

/**
 * One peer's two Aeron streams as set up and watched, apart from moving bytes over them, which
 * the {@link AeronChannel} that owns this object does: which sessions and medium (IPC or UDP) they
 * use, the records that end forming the group and closing ({@link #READY}, {@link #GOODBYE_ACK}),
 * and what says the peer is gone: its stream stayed unconnected for the liveness timeout, or the
 * {@link Sentinels} reported its death. The channel fails the peer on what this object finds.
 *
 * <p>The fields the channel's reading and writing code use are package-private, so that code
 * reads them directly. Touched under the transport's I/O lock, but for {@link #image}, which the
 * group's formation sets.
 */
final class PeerStreams {
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
    /** The peer said goodbye and has not been told yet that it arrived; the channel's poll tells it. */
    boolean acknowledgementOwed;
    /** The peer's death was reported (its sentinel connection closed): fail it once its image is drained. */
    String deathReported;
    /** When the publication was first seen without a subscriber, or 0 while it has one. */
    private long unconnectedSince;

    PeerStreams(int sessionIn, boolean ipc, ExclusivePublication publication) {
        this.sessionIn = sessionIn;
        this.ipc = ipc;
        this.publication = publication;
    }

    int sessionIn() {
        return sessionIn;
    }

    boolean ipc() {
        return ipc;
    }

    boolean hasImage() {
        return image != null;
    }

    void image(Image arrived) {
        this.image = arrived;
    }

    boolean publicationConnected() {
        return publication.isConnected();
    }

    boolean ready() {
        return ready;
    }

    boolean goodbyeAcknowledged() {
        return goodbyeAcknowledged;
    }

    /** Takes note of one of the records above; false for a type that is none of them. */
    boolean onRecord(int type) {
        switch (type) {
            case READY -> ready = true;
            case GOODBYE_ACK -> goodbyeAcknowledged = true;
            default -> {
                return false;
            }
        }
        return true;
    }

    /** The peer died (its sentinel connection closed): it is failed once what it sent is read. */
    void deathReported(String why) {
        if (deathReported == null) {
            deathReported = why;
        }
    }

    /**
     * Checks the publication still has a subscriber.
     *
     * @return why the peer counts as gone (no subscriber for the liveness timeout), or null
     */
    String checkConnected(int peer, long now, long livenessNanos) {
        if (publication.isConnected()) {
            unconnectedSince = 0;
        } else if (unconnectedSince == 0) {
            unconnectedSince = now;
        } else if (now - unconnectedSince > livenessNanos) {
            return "the stream to rank " + peer + " stayed unconnected for longer than the liveness timeout of "
                    + livenessNanos / 1_000_000 + " ms";
        }
        return null;
    }
}
