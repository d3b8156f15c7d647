package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;

/** Both algorithms over UDP on loopback, each rank with its own embedded driver. */
class AeronUdpAggregatorTest extends AggregatorConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.udp(worldSize, timeout);
    }
}
