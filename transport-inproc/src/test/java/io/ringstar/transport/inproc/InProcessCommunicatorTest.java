package io.ringstar.transport.inproc;

import io.ringstar.Transport;
import io.ringstar.testing.CommunicatorConformanceTest;
import java.time.Duration;
import java.util.List;

/** The communicator's contract in one JVM, with the full sweep: world sizes 1 to 8, every count. */
class InProcessCommunicatorTest extends CommunicatorConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }
}
