package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.ShardedStarConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * The sharded star's contract over UDP on loopback, each rank with its own embedded driver: the
 * sweep at three ranks only (a server other than rank 0 in the middle of the rank order, every link
 * carrying parts and results both ways), as over Netty; the communicator's in-place star with every
 * op on floats and every type with the sum (each tiny partition is a datagram round trip through
 * two drivers, and the 15 pairs took a minute on a loaded 2-core machine); the other cases in full.
 */
class AeronUdpShardedStarTest extends ShardedStarConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.udp(worldSize, timeout);
    }

    @Override
    protected int[] worldSizes() {
        return new int[] {3};
    }

    @Override
    protected boolean everyOpWithEveryType() {
        return false;
    }
}
