package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * Both algorithms over UDP on loopback, each rank with its own embedded driver. Every rank starts
 * a media driver here, so a group takes about twice as long to form as over IPC: the sweep keeps
 * every element count but only world sizes 2, 3, 5 and 8 (the IPC run covers 1 to 8), to keep
 * the module's tests within a few minutes on 2 cores.
 */
class AeronUdpAggregatorTest extends AggregatorConformanceTest {
    @Override
    protected int[] worldSizes() {
        return new int[] {2, 3, 5, 8};
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.udp(worldSize, timeout);
    }
}
