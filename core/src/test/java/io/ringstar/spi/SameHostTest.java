package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SameHostTest {
    @Test
    void advertisedHostsAreOneHostWhenEqualOrBothLoopback() {
        assertTrue(SameHost.hosts("10.0.0.5", "10.0.0.5"));
        assertTrue(SameHost.hosts("127.0.0.1", "127.0.1.1"));
        assertTrue(SameHost.hosts("::1", "127.0.0.1"));
        assertTrue(SameHost.hosts("localhost", "127.0.0.1"));
        assertFalse(SameHost.hosts("10.0.0.5", "10.0.0.6"));
        assertFalse(SameHost.hosts("127.0.0.1", "10.0.0.6"));
        assertFalse(SameHost.hosts("10.0.0.6", "::1"));
    }

    @Test
    void aLoopbackConnectionIsOnThisHostAndAnUnconnectedChannelIsNot() throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress());
                    SocketChannel accepted = server.accept()) {
                assertTrue(SameHost.connection(client));
                assertTrue(SameHost.connection(accepted));
            }
        }
        try (SocketChannel unconnected = SocketChannel.open()) {
            assertFalse(SameHost.connection(unconnected));
        }
    }
}
