package io.ringstar.bench.jmh;

import io.ringstar.transport.aeron.SharedMediaDriver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A {@link SharedMediaDriver} in a child JVM (same Java, same class path, the project's driver
 * defaults), in a fresh directory under {@code /dev/shm} (else the temporary directory) named with
 * this process's pid. Ranks that name its {@link #directory()} with the {@code aeron.dir} option
 * talk over IPC.
 *
 * <p>Ownership: this object owns the child process, its output file and its directory; {@link #close}
 * removes all three, and so does a shutdown hook should this JVM end without {@code close} (a
 * failed benchmark fork, Ctrl-C). Blocking: {@link #start} waits until the driver says it is ready,
 * at most the limit given; {@code close} at most {@link #STOP_LIMIT} twice.
 */
final class SharedMediaProcess implements AutoCloseable {
    /** How long the child has to stop after SIGTERM, and again after SIGKILL. */
    static final Duration STOP_LIMIT = Duration.ofSeconds(10);
    private static final String READY = "media driver ready in ";
    private static final AtomicInteger STARTED = new AtomicInteger();

    private final Process process;
    private final Path directory;
    private final Path output;
    private final Thread orphanGuard;

    private SharedMediaProcess(Process process, Path directory, Path output) {
        this.process = process;
        this.directory = directory;
        this.output = output;
        this.orphanGuard = new Thread(this::stop, "ringstar-jmh-driver-guard");
        Runtime.getRuntime().addShutdownHook(orphanGuard);
    }

    /**
     * Starts the driver and waits until it is ready.
     *
     * @throws IllegalStateException if it exited or was not ready within {@code limit}, with its
     *     output; the child is stopped first
     */
    static SharedMediaProcess start(Duration limit) {
        Path shm = Path.of("/dev/shm");
        Path root = Files.isDirectory(shm) && Files.isWritable(shm) ? shm
                : Path.of(System.getProperty("java.io.tmpdir"));
        Path directory = root.resolve("ringstar-jmh-driver-" + ProcessHandle.current().pid() + "-"
                + STARTED.incrementAndGet());
        Path output;
        Process process;
        try {
            output = Files.createTempFile("ringstar-jmh-driver-", ".log");
            List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    // Agrona reaches into the JDK as it does in every rank (the jar's manifest says so too).
                    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
                    "-cp", System.getProperty("java.class.path"),
                    SharedMediaDriver.class.getName(), "--dir", directory.toString());
            process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the shared media driver for " + directory + ": " + e, e);
        }
        SharedMediaProcess driver = new SharedMediaProcess(process, directory, output);
        driver.awaitReady(limit);
        return driver;
    }

    private void awaitReady(Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        try {
            while (!Files.readString(output).contains(READY + directory)) {
                if (!process.isAlive() || System.nanoTime() - deadline >= 0) {
                    String said = Files.readString(output).strip();
                    String state = process.isAlive() ? "was not ready within " + limit
                            : "exited with " + process.exitValue();
                    close();
                    throw new IllegalStateException("the shared media driver for " + directory + " " + state
                            + "; it said: " + (said.isEmpty() ? "nothing" : said));
                }
                Thread.sleep(20);
            }
        } catch (IOException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            close();
            throw new IllegalStateException("waiting for the shared media driver for " + directory + ": " + e, e);
        }
    }

    /** The driver's directory, the value for the {@code aeron.dir} option. */
    String directory() {
        return directory.toString();
    }

    /**
     * Stops the driver with SIGTERM (it then removes its directory), or SIGKILL if it has not ended
     * within {@link #STOP_LIMIT}, and removes what is left. Idempotent.
     */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(orphanGuard);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or about to: it stops the driver itself.
            return;
        }
        stop();
    }

    private void stop() {
        process.destroy();
        try {
            if (!process.waitFor(STOP_LIMIT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(STOP_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        deleteTree(directory);
        deleteTree(output);
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(path -> path.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // Best effort: a driver killed mid-write may leave a file that vanishes while walking.
        }
    }
}
