package io.ringstar.transport.inproc;

import io.ringstar.Transport;
import io.ringstar.testing.TransportProbeConformanceTest;
import java.time.Duration;
import java.util.List;

/** The probe contract in process: peers' status read directly, records for failure reports only. */
class InProcessProbeConformanceTest extends TransportProbeConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }
}
