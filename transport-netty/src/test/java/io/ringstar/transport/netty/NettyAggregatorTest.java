package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * Both algorithms over TCP on loopback, checked against the closed-form results of the shared
 * suite: its reduced sweep (the in-process transport runs the full one), every failure case in full.
 */
class NettyAggregatorTest extends AggregatorConformanceTest {
    @Override
    protected Sweep sweep() {
        return Sweep.REDUCED;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }
}
