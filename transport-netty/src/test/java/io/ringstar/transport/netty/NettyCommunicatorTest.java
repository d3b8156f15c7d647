package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.CommunicatorConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * The communicator's contract over TCP on loopback: the reduced sweep of the shared suite (world
 * sizes 2, 3 and 5, a sample of the combinations), every failure case.
 */
class NettyCommunicatorTest extends CommunicatorConformanceTest {
    @Override
    protected Sweep sweep() {
        return Sweep.REDUCED;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }
}
