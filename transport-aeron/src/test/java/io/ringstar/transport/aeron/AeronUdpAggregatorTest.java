package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * Both algorithms over UDP on loopback, each rank with its own embedded driver: the reduced sweep
 * of the shared suite (a group takes about twice as long to form as over IPC, and every rank's
 * driver is a thread on a 2-core machine), every failure case in full.
 */
class AeronUdpAggregatorTest extends AggregatorConformanceTest {
    @Override
    protected Sweep sweep() {
        return Sweep.REDUCED;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.udp(worldSize, timeout);
    }
}
