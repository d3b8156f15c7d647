package io.ringstar.transport.inproc;

import io.ringstar.Transport;
import io.ringstar.testing.ShardedStarConformanceTest;
import java.time.Duration;
import java.util.List;

/** The sharded star's contract over the in-process transport. */
class InProcessShardedStarTest extends ShardedStarConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }
}
