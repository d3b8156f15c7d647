package io.ringstar.transport.inproc;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.testing.AggregatorConformanceTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The whole aggregator contract again with a CRC32C on every message: the checksum must change no
 * result and no failure rule, at world sizes 3 and 4 (odd and even segment counts; a star with
 * several workers); {@link InProcessAggregatorTest} covers every world size without it.
 */
class InProcessChecksumAggregatorTest extends AggregatorConformanceTest {
    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return InProcessTransport.createGroup(worldSize, timeout);
    }

    @Override
    protected Map<String, String> suiteOptions() {
        return Map.of(DistributedConfig.CHECKSUM_OPTION, DistributedConfig.CHECKSUM_CRC32C);
    }

    @Override
    protected int[] worldSizes() {
        return new int[] {3, 4};
    }
}
