package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.TransportProbeConformanceTest;
import java.time.Duration;
import java.util.List;

/** The probe contract over UDP on loopback: every rank a separate transport with its own embedded driver. */
class AeronUdpProbeConformanceTest extends TransportProbeConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.udp(worldSize, timeout);
    }
}
