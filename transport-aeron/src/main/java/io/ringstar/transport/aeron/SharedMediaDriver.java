package io.ringstar.transport.aeron;

import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import java.time.Duration;
import java.util.Locale;
import org.agrona.concurrent.ShutdownSignalBarrier;

/**
 * Runs one media driver that several ranks on this host share (each started with
 * {@code aeron.dir} set to its directory), so that they talk over IPC. It uses the embedded
 * drivers' defaults, except the liveness timeout: one minute, since it cannot know the ranks'
 * collective timeout, and it bounds how long a rank on it may pause and carry on. It runs until it
 * gets SIGINT or SIGTERM, then removes its directory.
 *
 * <pre>
 * java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp ringstar.jar \
 *     io.ringstar.transport.aeron.SharedMediaDriver --dir /dev/shm/ringstar-shared [--threading shared]
 *     [--idle backoff] [--term-length 4194304] [--liveness-ms 60000]
 * </pre>
 * The directory it was given is printed on standard output once the driver is ready.
 */
public final class SharedMediaDriver {
    private SharedMediaDriver() {
    }

    public static void main(String[] args) {
        String dir = null;
        ThreadingMode threading = ThreadingMode.SHARED;
        String idle = "backoff";
        int termLength = AeronSettings.DEFAULT_TERM_LENGTH;
        Duration liveness = Duration.ofMillis(AeronTransport.DEFAULT_LIVENESS_MILLIS);
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--dir" -> dir = value;
                case "--threading" -> threading = ThreadingMode.valueOf(value.toUpperCase(Locale.ROOT));
                case "--idle" -> {
                    AeronSettings.idleStrategy(value);
                    idle = value;
                }
                case "--term-length" -> termLength = Integer.parseInt(value);
                case "--liveness-ms" -> liveness = Duration.ofMillis(Long.parseLong(value));
                default -> usage("unknown argument " + args[i]);
            }
            if (value == null) {
                usage(args[i] + " needs a value");
            }
            i++;
        }
        if (dir == null) {
            usage("--dir is required");
        }
        // Nothing in this process can wake a standalone driver's threads, so they use Agrona's strategies as named.
        String idleName = idle;
        // Closed in reverse order: the driver (removing its directory) before the barrier lets the JVM end.
        try (ShutdownSignalBarrier barrier = new ShutdownSignalBarrier();
                MediaDriver driver = MediaDriver.launch(DriverHandle.driverContext(dir, threading,
                        () -> AeronSettings.idleStrategy(idleName), termLength, liveness))) {
            System.out.println("media driver ready in " + driver.aeronDirectoryName());
            System.out.flush();
            barrier.await();
        }
    }

    private static void usage(String problem) {
        System.err.println("SharedMediaDriver: " + problem + "\nusage: SharedMediaDriver --dir DIR [--threading"
                + " shared|shared_network|dedicated] [--idle backoff|sleep|yield|spin] [--term-length BYTES]"
                + " [--liveness-ms MILLIS]");
        System.exit(2);
    }
}
