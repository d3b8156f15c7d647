package io.ringstar.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.aeron.driver.MediaDriver;
import io.ringstar.Transport;
import io.ringstar.testing.TransportConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The transport contract over IPC: every rank a client of one media driver that the test class shares. */
class AeronIpcConformanceTest extends TransportConformanceTest {
    private static MediaDriver driver;

    @BeforeAll
    static void startDriver() {
        driver = AeronGroups.launchShared("ringstar-test-ipc-conformance");
    }

    @AfterAll
    static void stopDriver() {
        driver.close();
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        List<Transport> group = AeronGroups.ipc(driver, worldSize, timeout);
        for (int rank = 1; rank < worldSize; rank++) {
            assertTrue(((AeronTransport) group.get(0)).usesIpc(rank), "rank 0 talks to rank " + rank + " over IPC");
        }
        return group;
    }
}
