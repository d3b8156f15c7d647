package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.PayloadIntegrityTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The checksum's detection of a flipped bit, with the messages crossing Aeron IPC on a shared driver. */
class AeronPayloadIntegrityTest extends PayloadIntegrityTest {
    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-integrity");

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.ipc(DRIVER.driver(), worldSize, timeout);
    }
}
