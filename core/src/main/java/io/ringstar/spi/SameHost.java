package io.ringstar.spi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;

/**
 * Whether a peer runs on this host, from what a transport already knows of it (a connection, an
 * advertised address), without a name lookup: what a transport counts for
 * {@link PeerTransport#start}, which stops its waits spinning when the host has fewer cores than
 * the group's ranks (and the media drivers that move their bytes) on it.
 */
public final class SameHost {
    private SameHost() {
    }

    /**
     * Whether the other end of {@code connection} is on this host: a loopback address, or the very
     * address this end has (the kernel routes a connection to one of its own addresses through it).
     * False when the addresses cannot be read.
     */
    public static boolean connection(SocketChannel connection) {
        try {
            return addresses(connection.getLocalAddress(), connection.getRemoteAddress());
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether two advertised host addresses (IP literals) name one host: equal, or both loopback. */
    public static boolean hosts(String one, String other) {
        return one.equals(other) || (loopback(one) && loopback(other));
    }

    private static boolean addresses(SocketAddress local, SocketAddress remote) {
        if (!(local instanceof InetSocketAddress here) || !(remote instanceof InetSocketAddress there)) {
            return false;
        }
        InetAddress address = there.getAddress();
        return address != null && (address.isLoopbackAddress() || address.equals(here.getAddress()));
    }

    private static boolean loopback(String host) {
        return host.startsWith("127.") || host.equals("::1") || host.equals("0:0:0:0:0:0:0:1")
                || host.equalsIgnoreCase("localhost");
    }
}
