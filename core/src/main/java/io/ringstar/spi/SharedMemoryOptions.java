package io.ringstar.spi;

import io.ringstar.DistributedConfig;
import io.ringstar.config.NetworkOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.ToLongFunction;

/**
 * How a network transport's peers on this host use shared memory ({@link SharedMemoryRing}): the
 * options {@code sharedMemory} (auto, on, off), {@code sharedMemoryBytes} and
 * {@code sharedMemoryDirectory} ({@link NetworkOptions}), and the job id that names the ring
 * files. Given to {@link PeerTransport#startSharedMemory}.
 * Immutable.
 */
public final class SharedMemoryOptions {
    /** The network path only, for every peer (the peers' offers are still answered). */
    public static final SharedMemoryOptions OFF = new SharedMemoryOptions(NetworkOptions.SHARED_MEMORY_OFF,
            NetworkOptions.DEFAULT_SHARED_MEMORY_BYTES, Path.of(NetworkOptions.DEFAULT_SHARED_MEMORY_DIRECTORY),
            NetworkOptions.DEFAULT_JOB_ID, SharedMemoryOptions::usableSpace);

    private final String mode;
    private final int ringBytes;
    private final Path directory;
    private final String jobId;
    private final ToLongFunction<Path> usableSpace;

    private SharedMemoryOptions(String mode, int ringBytes, Path directory, String jobId,
            ToLongFunction<Path> usableSpace) {
        this.mode = mode;
        this.ringBytes = ringBytes;
        this.directory = directory;
        this.jobId = jobId;
        this.usableSpace = usableSpace;
    }

    /**
     * The options of {@code config}.
     *
     * @throws io.ringstar.InvalidConfigException if one is malformed
     */
    public static SharedMemoryOptions from(DistributedConfig config) {
        return new SharedMemoryOptions(NetworkOptions.SHARED_MEMORY.value(config),
                NetworkOptions.SHARED_MEMORY_BYTES.value(config), NetworkOptions.SHARED_MEMORY_DIRECTORY.value(config),
                NetworkOptions.JOB_ID.value(config), SharedMemoryOptions::usableSpace);
    }

    /** These options, with the free space of the ring directory read by {@code space}: for tests of a full store. */
    SharedMemoryOptions withUsableSpace(ToLongFunction<Path> space) {
        return new SharedMemoryOptions(mode, ringBytes, directory, jobId, Objects.requireNonNull(space));
    }

    /** {@code auto}, {@code on} or {@code off}. */
    public String mode() {
        return mode;
    }

    /** Whether shared memory is tried at all. */
    public boolean enabled() {
        return !mode.equals(NetworkOptions.SHARED_MEMORY_OFF);
    }

    /** Whether a pair that cannot have it fails the open. */
    public boolean required() {
        return mode.equals(NetworkOptions.SHARED_MEMORY_ON);
    }

    public int ringBytes() {
        return ringBytes;
    }

    public Path directory() {
        return directory;
    }

    public String jobId() {
        return jobId;
    }

    long usableSpace() {
        return usableSpace.applyAsLong(directory);
    }

    ToLongFunction<Path> usableSpaceFunction() {
        return usableSpace;
    }

    private static long usableSpace(Path directory) {
        try {
            return Files.getFileStore(directory).getUsableSpace();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "sharedMemory=" + mode + ", sharedMemoryBytes=" + ringBytes + ", directory=" + directory;
    }
}
