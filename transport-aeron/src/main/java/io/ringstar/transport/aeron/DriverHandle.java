package io.ringstar.transport.aeron;

import io.aeron.Aeron;
import io.aeron.CncFileDescriptor;
import io.aeron.CommonContext;
import io.aeron.UnavailableImageHandler;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.ringstar.CollectiveException;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.agrona.ErrorHandler;
import org.agrona.IoUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * This rank's media driver and its Aeron client: either a driver embedded in this process, in a
 * directory of its own that {@link #close()} removes, or an external driver that several ranks on
 * this host share, named by {@value AeronTransport#DIR_OPTION}. Also says which driver it is
 * ({@link #driverId()}), so ranks that share one can talk over IPC.
 */
final class DriverHandle {
    /** Prefix of embedded drivers' directories; the rest is the job, the rank, the pid and a counter. */
    static final String DIR_PREFIX = "ringstar-aeron-";
    private static final Pattern OWNED_DIR = Pattern.compile(Pattern.quote(DIR_PREFIX) + ".*-p(\\d+)-\\d+");
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final System.Logger LOG = System.getLogger(DriverHandle.class.getName());
    /** How long the client waits for a driver's heartbeat before it counts the driver as dead. */
    private static final long DRIVER_TIMEOUT_MILLIS = 10_000;
    /**
     * How long a closing client waits between marking its streams closed and unmapping them when a
     * thread may still be inside one: far longer than one copy into or out of a term takes.
     */
    static final long CLOSE_LINGER_MILLIS = 500;

    private final MediaDriver driver;
    private final Aeron aeron;
    private final String driverId;
    private final String directory;
    /**
     * The embedded driver's idle strategies that {@link #wake} can end a long park of; none for an
     * external driver. An array: {@link #wake} runs on the data path, which must not allocate.
     */
    private final DriverIdleStrategy[] wakeable;

    private DriverHandle(MediaDriver driver, Aeron aeron, String driverId, String directory,
            DriverIdleStrategy[] wakeable) {
        this.driver = driver;
        this.aeron = aeron;
        this.driverId = driverId;
        this.directory = directory;
        this.wakeable = wakeable;
    }

    /**
     * Starts an embedded driver (unless the settings name an external one) and connects a client.
     *
     * @param customizer a last say over the embedded driver's context (tests add loss generators)
     * @throws CollectiveException if the driver cannot start or the external one does not answer
     */
    static DriverHandle open(AeronSettings settings, int rank, UnaryOperator<MediaDriver.Context> customizer,
            UnavailableImageHandler unavailable, ErrorHandler errors) {
        MediaDriver driver = null;
        Aeron aeron = null;
        String dir = settings.externalDir();
        List<DriverIdleStrategy> wakeable = new ArrayList<>();
        try {
            if (dir == null) {
                removeStaleDirectories(settings.dirRoot());
                dir = settings.dirRoot().resolve(DIR_PREFIX + sanitize(settings.jobId()) + "-r" + rank + "-p"
                        + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet()).toString();
                Supplier<IdleStrategy> idle = settings.idle().equals("backoff") ? () -> {
                    DriverIdleStrategy strategy = new DriverIdleStrategy();
                    wakeable.add(strategy);
                    return strategy;
                } : () -> AeronSettings.idleStrategy(settings.idle());
                MediaDriver.Context context = driverContext(dir, settings.threading(), idle,
                        settings.termLength(), settings.liveness())
                        .errorHandler(error -> LOG.log(System.Logger.Level.WARNING, "rank " + rank
                                + "'s media driver: " + error));
                driver = MediaDriver.launch(customizer.apply(context));
            } else if (!new File(dir, CncFileDescriptor.CNC_FILE).exists()) {
                throw new CollectiveException("open", rank, CollectiveException.NO_RANK, "no media driver runs in "
                        + dir + " (option " + AeronTransport.DIR_OPTION + "): it has no " + CncFileDescriptor.CNC_FILE);
            }
            aeron = Aeron.connect(new Aeron.Context()
                    .aeronDirectoryName(dir)
                    .clientName("ringstar rank " + rank)
                    // A paused process must not find its driver "gone" when it resumes.
                    .driverTimeoutMs(Math.max(DRIVER_TIMEOUT_MILLIS, settings.liveness().toMillis()))
                    .unavailableImageHandler(unavailable)
                    .errorHandler(errors)
                    .subscriberErrorHandler(errors));
            return new DriverHandle(driver, aeron, identify(dir), dir, wakeable.toArray(new DriverIdleStrategy[0]));
        } catch (CollectiveException e) {
            closeAfterFailure(e, aeron, driver);
            throw e;
        } catch (RuntimeException e) {
            closeAfterFailure(e, aeron, driver);
            throw new CollectiveException("open", rank, CollectiveException.NO_RANK, (driver == null && dir != null
                    && settings.externalDir() != null ? "cannot connect to the media driver in " + dir
                    : "cannot start a media driver in " + dir) + ": " + e, e);
        } catch (Error e) {
            // An Error after the launch (an IllegalAccessError without --add-exports, say) must not leave the
            // driver's threads running and its directory behind; the Error itself goes on unchanged.
            closeAfterFailure(e, aeron, driver);
            throw e;
        }
    }

    /**
     * Closes what {@link #open} had started before {@code cause} stopped it; a failure to close is
     * added to {@code cause} as suppressed, so that the reason the open failed is the one reported.
     */
    private static void closeAfterFailure(Throwable cause, Aeron aeron, MediaDriver driver) {
        for (AutoCloseable started : new AutoCloseable[] {aeron, driver}) {
            if (started != null) {
                try {
                    started.close();
                } catch (Exception | Error e) {
                    cause.addSuppressed(e);
                }
            }
        }
    }

    /**
     * A driver context with ringstar's defaults: the given threading mode and idle strategies (one new
     * one per agent that the mode runs on a thread of its own), small
     * sparse terms, and every liveness timeout the given one (deaths do not wait for it: the
     * {@link Sentinels} report them).
     * Used for embedded drivers and by {@link SharedMediaDriver}.
     */
    static MediaDriver.Context driverContext(String dir, ThreadingMode threading, Supplier<IdleStrategy> idle,
            int termLength, Duration liveness) {
        long livenessNs = liveness.toNanos();
        return new MediaDriver.Context()
                .aeronDirectoryName(dir)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                .warnIfDirectoryExists(false)
                .threadingMode(threading)
                .sharedIdleStrategy(idle.get())
                .sharedNetworkIdleStrategy(idle.get())
                .conductorIdleStrategy(idle.get())
                .senderIdleStrategy(idle.get())
                .receiverIdleStrategy(idle.get())
                // The executor only resolves host names, and ringstar's channels carry addresses: its
                // tasks run on the conductor, which saves a thread that woke every millisecond (1-2%
                // of a core while the rank idled).
                .asyncExecutorEnabled(false)
                .termBufferSparseFile(true)
                .publicationTermBufferLength(termLength)
                .ipcTermBufferLength(termLength)
                .initialWindowLength(Math.min(termLength / 2, 2 << 20))
                .socketRcvbufLength(2 << 20)
                .socketSndbufLength(2 << 20)
                // The driver checks liveness once per timer interval; a fifth of the timeout keeps detection near it.
                .timerIntervalNs(Math.min(TimeUnit.SECONDS.toNanos(1), livenessNs / 5))
                .imageLivenessTimeoutNs(livenessNs)
                .clientLivenessTimeoutNs(livenessNs)
                // Aeron requires the unblock timeout to exceed the client liveness timeout.
                .publicationUnblockTimeoutNs(livenessNs * 3)
                .publicationConnectionTimeoutNs(livenessNs)
                .publicationLingerTimeoutNs(Math.min(livenessNs, TimeUnit.SECONDS.toNanos(2)));
    }

    /** Removes embedded drivers' directories left by processes that are gone (killed, not closed). */
    static synchronized void removeStaleDirectories(Path root) {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(root, DIR_PREFIX + "*")) {
            for (Path entry : entries) {
                Matcher owned = OWNED_DIR.matcher(entry.getFileName().toString());
                if (owned.matches() && !ProcessHandle.of(Long.parseLong(owned.group(1))).map(ProcessHandle::isAlive)
                        .orElse(false)) {
                    deleteTree(entry);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not clean stale driver directories in " + root + ": " + e);
        }
    }

    /** Removes {@code dir} and what it holds; another process removing the same tree at once is no error. */
    private static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (NoSuchFileException | UncheckedIOException gone) {
            // removed meanwhile by another rank's clean-up
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "could not remove stale driver directory " + dir + ": " + e);
        }
    }

    /**
     * Names a running driver so that two ranks agree exactly when they use the same one: the boot
     * of this host, the directory, and the driver's start time and pid from its CnC file (two
     * containers may each have a {@code /dev/shm/x} of their own).
     */
    private static String identify(String dir) {
        String boot;
        try {
            boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII).strip();
        } catch (IOException | RuntimeException e) {
            boot = "host " + hostName();
        }
        String start = "?";
        MappedByteBuffer cnc = null;
        try {
            cnc = new CommonContext().aeronDirectoryName(dir).mapExistingCncFile(null);
            UnsafeBuffer meta = CncFileDescriptor.createMetaDataBuffer(cnc);
            start = meta.getLong(CncFileDescriptor.START_TIMESTAMP_FIELD_OFFSET) + "/"
                    + meta.getLong(CncFileDescriptor.PID_FIELD_OFFSET);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "could not read the CnC file in " + dir + ": " + e);
        } finally {
            if (cnc != null) {
                IoUtil.unmap(cnc);
            }
        }
        String canonical;
        try {
            canonical = new File(dir).getCanonicalPath();
        } catch (IOException e) {
            canonical = new File(dir).getAbsolutePath();
        }
        return boot + ":" + canonical + ":" + start;
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String sanitize(String jobId) {
        String safe = jobId.replaceAll("[^A-Za-z0-9_.]", "_");
        return safe.length() > 40 ? safe.substring(0, 40) : safe;
    }

    Aeron aeron() {
        return aeron;
    }

    String driverId() {
        return driverId;
    }

    /**
     * Ends a long park of the embedded driver's threads, if any: called when this rank sends or
     * begins to wait, so that its own traffic never waits for a sleeping driver. Any thread; never
     * blocks.
     */
    void wake() {
        for (int i = 0; i < wakeable.length; i++) {
            wakeable[i].wake();
        }
    }

    String directory() {
        return directory;
    }

    /**
     * Closes the client, then the embedded driver, which removes its directory. With
     * {@code othersMayBeInside}, the client first marks its publications
     * and images closed and then waits {@link #CLOSE_LINGER_MILLIS} before it unmaps their
     * buffers, so that a thread still inside one finishes there and its next call sees
     * {@code CLOSED} (or polls nothing) instead of touching unmapped memory. Without it the
     * client unmaps at once: the caller has made sure no thread is inside.
     */
    void close(boolean othersMayBeInside) {
        try {
            if (othersMayBeInside) {
                // Read by the client's conductor when it closes, after this thread has stopped it.
                aeron.context().closeLingerDurationNs(TimeUnit.MILLISECONDS.toNanos(CLOSE_LINGER_MILLIS));
            }
            aeron.close();
        } finally {
            closeQuietly(driver);
        }
    }

    private static void closeQuietly(MediaDriver driver) {
        if (driver != null) {
            try {
                driver.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing a media driver: " + e);
            }
        }
    }
}
