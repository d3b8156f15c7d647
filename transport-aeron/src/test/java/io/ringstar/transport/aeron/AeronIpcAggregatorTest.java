package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Both algorithms over IPC through one shared driver: the reduced sweep of the shared suite (the
 * in-process transport runs the full one), every failure case in full.
 */
class AeronIpcAggregatorTest extends AggregatorConformanceTest {
    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-aggregator");

    @Override
    protected Sweep sweep() {
        return Sweep.REDUCED;
    }

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.ipc(DRIVER.driver(), worldSize, timeout);
    }
}
