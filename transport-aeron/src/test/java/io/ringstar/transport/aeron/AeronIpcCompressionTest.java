package io.ringstar.transport.aeron;

import io.ringstar.Transport;
import io.ringstar.testing.CompressionConformanceTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The compression suite over IPC, every rank a client of one shared driver: the ring's and the
 * star's cases only, as over Netty (the in-process transport runs every case).
 */
class AeronIpcCompressionTest extends CompressionConformanceTest {
    @RegisterExtension
    static final SharedDriver DRIVER = new SharedDriver("ringstar-test-ipc-compression");

    @Override
    protected List<Transport> createGroup(int worldSize, Duration timeout) {
        return AeronGroups.ipc(DRIVER.driver(), worldSize, timeout);
    }

    @Override
    protected boolean everyCase() {
        return false;
    }
}
