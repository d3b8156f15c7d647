package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.TransportConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * The transport contract between ranks on this host, every rank a separate transport in this JVM:
 * with option {@code sharedMemory} at its default, through the shared-memory rings (the TCP
 * connections on loopback carrying the set-up and the death detection);
 * {@link NettyNetworkPathConformanceTest} runs it over TCP alone.
 */
class NettyTransportConformanceTest extends TransportConformanceTest {
    @Override
    protected boolean sharedMemoryExpected() {
        return true;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }
}
