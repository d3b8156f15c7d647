package io.ringstar.transport.aeron;

import io.aeron.driver.MediaDriver;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One embedded media driver that a test class's ranks share, as an IPC group needs: started before
 * the class's first test and stopped (its directory removed) after its last. Register it as a
 * static field with {@code @RegisterExtension}.
 */
final class SharedDriver implements BeforeAllCallback, AfterAllCallback {
    private final String name;
    private MediaDriver driver;

    SharedDriver(String name) {
        this.name = name;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        driver = AeronGroups.launchShared(name);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        // Null if beforeAll failed to launch it: that failure is the one to report, not an NPE here.
        if (driver != null) {
            driver.close();
            driver = null;
        }
    }

    MediaDriver driver() {
        return driver;
    }
}
