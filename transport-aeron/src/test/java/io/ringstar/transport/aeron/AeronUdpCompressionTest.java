package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.CompressionConformanceTest;
import java.time.Duration;
import java.util.List;

/**
 * The compression suite over UDP on loopback, each rank with its own embedded driver: the ring's
 * and the star's cases only, as over Netty (the in-process transport runs every case).
 */
class AeronUdpCompressionTest extends CompressionConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.udp(worldSize, timeout);
    }

    @Override
    protected boolean everyCase() {
        return false;
    }
}
