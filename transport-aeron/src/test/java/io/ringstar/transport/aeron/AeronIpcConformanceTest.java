package io.ringstar.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.Transport;
import io.ringstar.testing.TransportConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The transport contract between ranks that share one media driver (the test class's): their frames
 * go through the shared-memory rings, the IPC streams carrying the set-up beside them.
 */
class AeronIpcConformanceTest extends TransportConformanceTest {
    @Override
    protected boolean sharedMemoryExpected() {
        return true;
    }

    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-conformance");

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        List<Transport> group = AeronGroups.ipc(DRIVER.driver(), worldSize, timeout);
        try {
            for (int rank = 1; rank < worldSize; rank++) {
                assertTrue(((AeronTransport) group.get(0)).usesIpc(rank), "rank 0 talks to rank " + rank + " over IPC");
            }
            if (worldSize > 1) {
                // The spin rule counts every rank on this host, not the one driver they share (IPC
                // moves no bytes through it).
                assertEquals(worldSize, ((AeronTransport) group.get(0)).waitSchedule().busyThreadsOnThisHost());
            }
        } catch (Throwable e) {
            // The suite never sees a group that failed this check, so it is closed here, or its ranks linger.
            for (Transport transport : group) {
                try {
                    transport.close();
                } catch (RuntimeException closeFailure) {
                    e.addSuppressed(closeFailure);
                }
            }
            throw e;
        }
        return group;
    }
}
