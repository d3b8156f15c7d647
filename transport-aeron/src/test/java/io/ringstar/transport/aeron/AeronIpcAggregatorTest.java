package io.ringstar.transport.aeron;

import io.aeron.driver.MediaDriver;
import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Both algorithms over IPC through one shared driver, the whole sweep of the shared suite. */
class AeronIpcAggregatorTest extends AggregatorConformanceTest {
    private static MediaDriver driver;

    @BeforeAll
    static void startDriver() {
        driver = AeronGroups.launchShared("ringstar-test-ipc-aggregator");
    }

    @AfterAll
    static void stopDriver() {
        driver.close();
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.ipc(driver, worldSize, timeout);
    }
}
