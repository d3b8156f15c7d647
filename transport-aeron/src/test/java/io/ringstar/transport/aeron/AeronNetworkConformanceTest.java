package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.NetworkTransportConformanceTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Group formation and the shared handshake over Aeron UDP, each rank with its own embedded driver:
 * rank 0 listens on the coordinator's TCP port only while the group forms; a formed rank receives
 * on its UDP endpoint.
 */
class AeronNetworkConformanceTest extends NetworkTransportConformanceTest {
    @Override
    protected Transport open(int worldSize, int rank, String coordinator, Duration timeout,
            Map<String, String> options) {
        return new AeronTransport(AeronGroups.config(worldSize, rank, coordinator, timeout, options));
    }

    @Override
    protected List<InetSocketAddress> tcpListeners(Transport rank) {
        return List.of();
    }

    @Override
    protected List<InetSocketAddress> udpListeners(Transport rank) {
        return List.of(((AeronTransport) rank).udpEndpoint());
    }
}
