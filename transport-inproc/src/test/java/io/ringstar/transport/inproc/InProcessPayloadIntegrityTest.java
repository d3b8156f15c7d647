package io.ringstar.transport.inproc;

import io.ringstar.Transport;
import io.ringstar.testing.PayloadIntegrityTest;
import java.time.Duration;
import java.util.List;

class InProcessPayloadIntegrityTest extends PayloadIntegrityTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }
}
