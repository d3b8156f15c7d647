package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.CommunicatorConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The communicator's contract over IPC, every rank a client of one shared driver: the reduced sweep
 * of the shared suite (the in-process transport runs the full one), every failure case.
 */
class AeronIpcCommunicatorTest extends CommunicatorConformanceTest {
    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-communicator");

    @Override
    protected Sweep sweep() {
        return Sweep.REDUCED;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.ipc(DRIVER.driver(), worldSize, timeout);
    }
}
