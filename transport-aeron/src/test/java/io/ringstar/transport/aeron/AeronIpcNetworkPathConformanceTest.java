package io.ringstar.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.Transport;
import io.ringstar.testing.TransportConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The transport contract between ranks that share one media driver with option
 * {@code sharedMemory=off}: their frames go through the IPC term buffers, the data path that
 * {@link AeronIpcConformanceTest}'s groups leave to the shared-memory rings.
 */
class AeronIpcNetworkPathConformanceTest extends TransportConformanceTest {
    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-network-path");

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        List<Transport> group = AeronGroups.ipcNetworkPath(DRIVER.driver(), worldSize, timeout);
        for (int rank = 1; rank < worldSize; rank++) {
            if (!((AeronTransport) group.get(0)).usesIpc(rank)) {
                group.forEach(Transport::close);
                assertTrue(false, "rank 0 talks to rank " + rank + " over IPC");
            }
        }
        return group;
    }
}
