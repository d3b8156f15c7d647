package io.ringstar.transport.aeron;

import io.aeron.ChannelUri;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import java.security.SecureRandom;
import java.time.Duration;
import org.agrona.concurrent.IdleStrategy;

/**
 * Sets up an {@link AeronTransport}'s streams with its peers, in two steps around the rendezvous:
 * {@link #bind} subscribes on this rank's UDP endpoint to the one session id each peer will send
 * as, and {@link #connect} adds, from rank 0's table, the publication to each peer (and for a peer
 * on the same driver, the IPC subscription in place of the UDP one) and makes the
 * {@link AeronChannel} over them. It fills the transport's arrays of subscriptions and channels.
 */
final class Streams {
    /** Draws each rank's base of the UDP session ids it takes. */
    private static final SecureRandom SESSION_BASES = new SecureRandom();

    private final AeronTransport transport;
    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final AeronSettings settings;
    private final DriverHandle driver;
    /** By peer: the subscription that takes only that peer's session; the transport's array. */
    private final Subscription[] subscriptions;
    /** This rank's random base of the UDP session ids its peers send as: the base plus the peer's rank. */
    private final int sessionBase = SESSION_BASES.nextInt();

    Streams(AeronTransport transport, int rank, int worldSize, Duration timeout, AeronSettings settings,
            DriverHandle driver, Subscription[] subscriptions) {
        this.transport = transport;
        this.rank = rank;
        this.worldSize = worldSize;
        this.timeout = timeout;
        this.settings = settings;
        this.driver = driver;
        this.subscriptions = subscriptions;
    }

    int sessionBase() {
        return sessionBase;
    }

    /**
     * Before the rendezvous, so that no peer's stream can arrive before this rank takes it: one
     * subscription per peer, each to the one session id that peer will send UDP as.
     *
     * @param until the deadline, in {@link System#nanoTime()} terms
     * @return the UDP port bound
     */
    int bind(long until) {
        // The base reaches the peers only through the authenticated rendezvous. The driver drops every
        // other session sent to this port without making an image of it, so a stranger's bytes are
        // never read. The first subscription binds the port; the tag makes the others share its socket
        // (port 0 would open another).
        String host = settings.bindAddress().getHostAddress();
        long tag = driver.aeron().nextCorrelationId();
        int first = rank == 0 ? 1 : 0;
        subscriptions[first] = driver.aeron().addSubscription(udpChannel(host, settings.port()) + "|tags=" + tag
                + "|session-id=" + (sessionBase + first), AeronTransport.STREAM_ID);
        int port = resolvedPort(subscriptions[first], until);
        // The others at once, and then awaited together: one round trip to the driver, not one per peer.
        long[] registrations = new long[worldSize];
        for (int peer = first + 1; peer < worldSize; peer++) {
            if (peer != rank) {
                registrations[peer] = driver.aeron().asyncAddSubscription("aeron:udp?tags=" + tag + "|session-id="
                        + (sessionBase + peer), AeronTransport.STREAM_ID);
            }
        }
        for (int peer = first + 1; peer < worldSize; peer++) {
            if (peer != rank) {
                subscriptions[peer] = awaitSubscription(peer, registrations[peer], until);
            }
        }
        return port;
    }

    /** After the rendezvous: a publication to every peer, and its channel in {@code peers}. */
    void connect(Rendezvous.Table table, AeronChannel[] peers) {
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer == rank) {
                continue;
            }
            Rendezvous.Endpoint there = table.endpoints().get(peer);
            boolean ipc = there.driverId().equals(driver.driverId());
            // IPC session ids must be unique on the shared driver, so they come from rank 0's nonce.
            int sessionOut = ipc ? sessionId(table.nonce(), rank, peer) : there.sessionBase() + rank;
            int sessionIn = ipc ? sessionId(table.nonce(), peer, rank) : sessionBase + peer;
            int mtu = Math.min(ipc ? AeronSettings.MAX_MTU : settings.mtu(), settings.termLength() / 8);
            String common = "term-length=" + settings.termLength() + "|mtu=" + mtu + "|session-id=" + sessionOut;
            // Aeron connects the UDP socket it sends from to the peer's endpoint: it is bound to the
            // route's source address (never the wildcard) and takes datagrams from that peer only.
            ExclusivePublication publication = driver.aeron().addExclusivePublication(ipc ? "aeron:ipc?" + common
                    : udpChannel(there.host(), there.port()) + "|" + common, AeronTransport.STREAM_ID);
            if (ipc) {
                subscriptions[peer].close();
                subscriptions[peer] = driver.aeron().addSubscription("aeron:ipc?session-id=" + sessionIn,
                        AeronTransport.STREAM_ID);
            }
            peers[peer] = new AeronChannel(transport, peer, sessionIn, ipc, publication, settings.chunkBytes(),
                    settings.receiveBufferBytes(), driver);
        }
    }

    private Subscription awaitSubscription(int peer, long registration, long until) {
        IdleStrategy idle = settings.newIdleStrategy();
        while (true) {
            Subscription subscription = driver.aeron().getSubscription(registration);
            if (subscription != null) {
                return subscription;
            }
            if (System.nanoTime() - until >= 0) {
                throw new CollectiveTimeoutException("rendezvous", rank, peer,
                        "the media driver did not add the subscription for rank " + peer
                        + "'s stream within the timeout of " + timeout);
            }
            idle.idle(0);
        }
    }

    /** Session ids unique within the group and, through rank 0's random nonce, apart from other groups'. */
    private int sessionId(int nonce, int from, int to) {
        return nonce + from * worldSize + to;
    }

    private int resolvedPort(Subscription subscription, long until) {
        IdleStrategy idle = settings.newIdleStrategy();
        while (true) {
            String resolved = subscription.tryResolveChannelEndpointPort();
            if (resolved != null) {
                String endpoint = ChannelUri.parse(resolved).get("endpoint");
                return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            }
            if (System.nanoTime() - until >= 0) {
                throw new CollectiveTimeoutException("rendezvous", rank, CollectiveException.NO_RANK,
                        "the media driver did not bind a UDP port on " + settings.bindAddress().getHostAddress()
                        + " within the timeout of " + timeout);
            }
            idle.idle(0);
        }
    }

    /** An Aeron UDP channel with this endpoint. */
    private static String udpChannel(String host, int port) {
        return "aeron:udp?endpoint=" + uriHost(host) + ":" + port;
    }

    /** A host as an Aeron channel URI wants it: an IPv6 address in brackets. */
    private static String uriHost(String host) {
        return host.indexOf(':') >= 0 ? "[" + host + "]" : host;
    }
}
