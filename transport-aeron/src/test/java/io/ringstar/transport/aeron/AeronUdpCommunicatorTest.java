package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.CommunicatorConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * The communicator's contract over UDP on loopback, each rank with its own embedded driver: the
 * reduced sweep of the shared suite, every failure case.
 */
class AeronUdpCommunicatorTest extends CommunicatorConformanceTest {
    @Override
    protected Sweep sweep() {
        return Sweep.REDUCED;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.udp(worldSize, timeout);
    }
}
