package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.TransportConformanceTest;
import java.time.Duration;
import java.util.List;

/** The transport contract over TCP alone (option {@code sharedMemory=off}), on loopback. */
class NettyNetworkPathConformanceTest extends TransportConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout, NettyGroups.NETWORK_PATH);
    }
}
