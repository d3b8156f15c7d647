package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.TransportProbeConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The probe contract over IPC: every rank a client of one media driver that the test class shares. */
class AeronIpcProbeConformanceTest extends TransportProbeConformanceTest {
    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-probe");

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.ipc(DRIVER.driver(), worldSize, timeout);
    }
}
