package io.ringstar.transport.inproc;

import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;

class InProcessAggregatorTest extends AggregatorConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }
}
