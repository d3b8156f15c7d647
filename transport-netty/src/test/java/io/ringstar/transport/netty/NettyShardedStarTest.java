package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.ShardedStarConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * The sharded star's contract over TCP on loopback, at three ranks (a server other than rank 0 in
 * the middle of the rank order, every link carrying parts and results both ways).
 */
class NettyShardedStarTest extends ShardedStarConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }

    @Override
    protected int[] worldSizes() {
        return new int[] {3};
    }
}
