package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.CompressionConformanceTest;
import java.time.Duration;
import java.util.List;

/** The compression suite over Netty on loopback: the ring's and the star's cases only. */
class NettyCompressionTest extends CompressionConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }

    @Override
    protected boolean everyCase() {
        return false;
    }
}
