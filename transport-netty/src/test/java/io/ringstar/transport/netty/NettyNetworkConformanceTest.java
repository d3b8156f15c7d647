package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.NetworkTransportConformanceTest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Group formation and the shared handshake over TCP: every rank listens, rank 0 on the coordinator's port. */
class NettyNetworkConformanceTest extends NetworkTransportConformanceTest {
    @Override
    protected Transport open(int worldSize, int rank, String coordinator, Duration timeout,
            Map<String, String> options) {
        return new NettyTransport(NettyGroups.config(worldSize, rank, coordinator, timeout, options));
    }

    @Override
    protected List<InetSocketAddress> tcpListeners(Transport rank) {
        return List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), ((NettyTransport) rank).listenPort()));
    }
}
