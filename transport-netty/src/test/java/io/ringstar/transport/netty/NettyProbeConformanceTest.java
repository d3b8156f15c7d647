package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.TransportProbeConformanceTest;
import java.time.Duration;
import java.util.List;

/** The probe contract over TCP on loopback: every rank a separate transport in this JVM. */
class NettyProbeConformanceTest extends TransportProbeConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }
}
