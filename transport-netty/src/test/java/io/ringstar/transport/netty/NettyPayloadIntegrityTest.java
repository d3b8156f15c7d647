package io.ringstar.transport.netty;

import io.ringstar.Transport;
import io.ringstar.testing.PayloadIntegrityTest;
import java.time.Duration;
import java.util.List;

/** The checksum's detection of a flipped bit, with the messages crossing real TCP connections. */
class NettyPayloadIntegrityTest extends PayloadIntegrityTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return NettyGroups.open(worldSize, timeout);
    }
}
