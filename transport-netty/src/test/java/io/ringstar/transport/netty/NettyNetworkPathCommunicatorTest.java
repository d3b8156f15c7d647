package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.CommunicatorConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * The communicator's contract over TCP alone (option {@code sharedMemory=off}), on loopback: the
 * reduced sweep, every failure case; {@link NettyCommunicatorTest} runs the same through shared memory.
 */
class NettyNetworkPathCommunicatorTest extends CommunicatorConformanceTest {
    @Override
    protected Sweep sweep() {
        return Sweep.REDUCED;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout, NettyGroups.NETWORK_PATH);
    }
}
