package io.ringstar.transport.inproc;

import io.ringstar.Transport;
import io.ringstar.testing.CompressionConformanceTest;
import java.time.Duration;
import java.util.List;

class InProcessCompressionTest extends CompressionConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }
}
