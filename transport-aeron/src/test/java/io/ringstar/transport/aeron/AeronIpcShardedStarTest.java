package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.ShardedStarConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded star's contract over IPC, every rank a client of one shared driver: the sweep at
 * three ranks only, as over Netty; the fixed four-rank cases in full.
 */
class AeronIpcShardedStarTest extends ShardedStarConformanceTest {
    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-sharded-star");

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.ipc(DRIVER.driver(), worldSize, timeout);
    }

    @Override
    protected int[] worldSizes() {
        return new int[] {3};
    }
}
