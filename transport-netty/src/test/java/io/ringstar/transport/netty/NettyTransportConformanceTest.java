package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.TransportConformanceTest;
import java.time.Duration;
import java.util.List;

/** The transport contract over TCP on loopback: every rank a separate transport in this JVM. */
class NettyTransportConformanceTest extends TransportConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }
}
