package io.ringstar.internal.observe;

import io.ringstar.CollectiveException;
import io.ringstar.DistributedConfig;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.CollectiveEvent;
import io.ringstar.observe.CollectiveListener;
import io.ringstar.observe.CollectiveState;
import io.ringstar.observe.CollectiveStatistics;
import io.ringstar.spi.TransportProbe;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Watches the calls of one communicator, aggregator or async parameter server: told by its
 * engine when each call is issued, starts and ends, it keeps this object's statistics, listeners
 * and JFR events, and hands each call to its transport's {@link TransportTrace} (numbers, flight
 * recorder, status answers, stall warning, dumps), which every communicator and aggregator on the
 * same transport shares.
 *
 * <p>Threads: calls are issued by one thread at a time and run by one thread at a time (possibly
 * another: a communicator's background thread). A call that completes allocates nothing unless a
 * listener is registered or a JFR recording takes {@code ringstar.Collective}.
 */
public final class CallObserver {
    private static final System.Logger LOG = System.getLogger("io.ringstar.observe");

    private final TransportTrace trace;
    private final int rank;
    private final int worldSize;
    private final CollectiveTimes times = new CollectiveTimes();
    private final List<CollectiveListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicBoolean listenerFailed = new AtomicBoolean();

    // The running call, for the thread that runs it.
    private String currentOperation;
    private String currentAlgorithm;
    private int currentRoot;
    private TensorLayout currentLayout;
    private long currentBytes;
    private long currentIssued;
    private long currentStart;
    private CollectiveJfrEvent jfrEvent;

    /**
     * @param owner what the user holds, named in dumps: {@code communicator}, {@code aggregator},
     *     {@code async-server}
     * @param probe the transport's hooks, or null for a transport that offers none
     */
    public CallObserver(DistributedConfig config, String owner, TransportProbe probe) {
        this(config, owner, probe, true);
    }

    /**
     * @param lockstep whether the ranks make the same calls in the same order (a communicator, an
     *     aggregator); the async parameter server's ranks do not, and get no stall warning
     */
    public CallObserver(DistributedConfig config, String owner, TransportProbe probe, boolean lockstep) {
        this.trace = TransportTrace.of(config, Objects.requireNonNull(owner, "owner"), probe, lockstep);
        this.rank = config.rank();
        this.worldSize = config.worldSize();
    }

    public void addListener(CollectiveListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * A non-blocking call was made: numbers it and records it as issued. The thread that runs it
     * must then start it with this number ({@link #start}).
     */
    public long issue(String operation, String algorithm, int root, TensorLayout layout) {
        long now = System.nanoTime();
        long bytes = bytesOf(layout);
        long sequence = trace.issue(operation, algorithm, root, layout, bytes, now);
        if (!listeners.isEmpty()) {
            tell(new CollectiveEvent(rank, worldSize, sequence, operation, algorithm, root,
                    TraceFile.elements(layout), tensorsOf(layout), bytes, CollectiveState.ISSUED, now, 0, 0, 0, null));
        }
        return sequence;
    }

    /**
     * A call begins to run on this thread: {@code issued} is its number from {@link #issue}, or 0
     * for a blocking call, which is numbered and recorded here. Returns the call's number.
     */
    public long start(long issued, String operation, String algorithm, int root, TensorLayout layout) {
        long now = System.nanoTime();
        long bytes = bytesOf(layout);
        long sequence = trace.start(issued, operation, algorithm, root, layout, bytes, now);
        currentOperation = operation;
        currentAlgorithm = algorithm;
        currentRoot = root;
        currentLayout = layout;
        currentBytes = bytes;
        currentStart = now;
        currentIssued = issued > 0 ? trace.issuedAt(sequence, now) : now;
        if (Jfr.collectiveEnabled()) {
            jfrEvent = new CollectiveJfrEvent();
            jfrEvent.begin();
        }
        if (!listeners.isEmpty()) {
            if (issued == 0) {
                // An issued event has not started, as CollectiveEvent says, even when the start follows at once.
                tell(new CollectiveEvent(rank, worldSize, sequence, operation, algorithm, root,
                        TraceFile.elements(layout), tensorsOf(layout), bytes, CollectiveState.ISSUED, now, 0, 0, 0,
                        null));
            }
            tell(event(sequence, CollectiveState.STARTED, 0, 0, null));
        }
        return sequence;
    }

    /** The running call completed. */
    public void complete(long sequence) {
        long now = System.nanoTime();
        long waited = trace.waitedSinceStart();
        trace.completed(sequence, now, waited);
        times.record(currentOperation, currentBytes, now - currentStart, waited);
        commitJfr(sequence, waited);
        if (!listeners.isEmpty()) {
            tell(event(sequence, CollectiveState.COMPLETED, now, waited, null));
        }
    }

    /**
     * The running call failed with {@code error}; a group failure (a {@link CollectiveException}
     * or an error) dumps the trace the first time, if a directory is set.
     */
    public void fail(long sequence, Throwable error) {
        long now = System.nanoTime();
        long waited = trace.waitedSinceStart();
        int peer = error instanceof CollectiveException ? ((CollectiveException) error).peerRank() : -1;
        commitJfr(sequence, waited);
        if (!listeners.isEmpty()) {
            tell(event(sequence, CollectiveState.FAILED, now, waited, error));
        }
        trace.failed(sequence, now, waited, peer, error,
                error instanceof CollectiveException || error instanceof Error);
    }

    /**
     * A call numbered by {@link #issue} that will never start (its queue refused it): recorded as
     * failed with {@code why}, which is no failure of the group.
     */
    public void abandon(long sequence, Throwable why) {
        trace.failed(sequence, System.nanoTime(), 0, -1, why, false);
    }

    /**
     * Writes the flight recorder of this rank's transport into {@code dir} (made if missing) as one
     * JSON file and returns its path; any thread, any time.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public Path dumpTrace(Path dir, String reason) {
        return trace.dump(Objects.requireNonNull(dir, "dir"), reason);
    }

    /** This object's completed calls per operation. */
    public CollectiveStatistics statistics() {
        return times.snapshot(rank);
    }

    private void commitJfr(long sequence, long waited) {
        CollectiveJfrEvent event = jfrEvent;
        if (event != null) {
            jfrEvent = null;
            event.end();
            event.operation = currentOperation;
            event.sequence = sequence;
            event.bytes = currentBytes;
            event.rank = rank;
            event.worldSize = worldSize;
            event.algorithm = currentAlgorithm;
            event.waitNanos = waited;
            event.commit();
        }
    }

    private CollectiveEvent event(long sequence, CollectiveState state, long ended, long waited, Throwable error) {
        return new CollectiveEvent(rank, worldSize, sequence, currentOperation, currentAlgorithm, currentRoot,
                TraceFile.elements(currentLayout), tensorsOf(currentLayout), currentBytes, state, currentIssued,
                currentStart, ended, waited, error);
    }

    private void tell(CollectiveEvent event) {
        for (CollectiveListener listener : listeners) {
            try {
                switch (event.state()) {
                    case ISSUED -> listener.issued(event);
                    case STARTED -> listener.started(event);
                    case COMPLETED -> listener.completed(event);
                    case FAILED -> listener.failed(event);
                    default -> throw new IllegalStateException("no state " + event.state());
                }
            } catch (RuntimeException e) {
                if (listenerFailed.compareAndSet(false, true)) {
                    LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": a collective listener threw (ignored, "
                            + "and said only once): " + e, e);
                }
            }
        }
    }

    private static long bytesOf(TensorLayout layout) {
        if (layout == null) {
            return 0;
        }
        long total = 0;
        List<TensorLayout.Group> groups = layout.groups();
        for (int g = 0; g < groups.size(); g++) {
            TensorLayout.Group group = groups.get(g);
            total += group.elementCount() * group.type().bytes();
        }
        return total;
    }

    private static int tensorsOf(TensorLayout layout) {
        return layout == null ? 0 : layout.tensorCount();
    }
}
