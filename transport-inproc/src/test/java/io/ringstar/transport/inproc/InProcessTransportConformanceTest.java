package io.ringstar.transport.inproc;

import io.ringstar.Transport;
import io.ringstar.testing.TransportConformanceTest;
import java.time.Duration;
import java.util.List;

class InProcessTransportConformanceTest extends TransportConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }
}
