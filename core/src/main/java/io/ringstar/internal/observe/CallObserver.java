package io.ringstar.internal.observe;

import io.ringstar.CollectiveException;
import io.ringstar.DistributedConfig;
import io.ringstar.config.NetworkOptions;
import io.ringstar.config.TraceOptions;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.CollectiveEvent;
import io.ringstar.observe.CollectiveListener;
import io.ringstar.observe.CollectiveState;
import io.ringstar.observe.CollectiveStatistics;
import io.ringstar.spi.TransportProbe;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Watches the calls of one communicator, aggregator or async parameter server: told by its
 * engine when each call is issued, starts and ends, it keeps the flight recorder
 * ({@value TraceOptions#TRACE_ENTRIES_OPTION}), the statistics, the JFR events and the listeners,
 * writes the trace dump ({@value TraceOptions#TRACE_DIR_OPTION}) on the first failure, answers the
 * peers' status queries, and, as the transport's {@link TransportProbe.WaitWatcher}, warns once
 * per call when a call has waited past {@value TraceOptions#STALL_WARNING_OPTION}
 * ({@link StallWarning}).
 *
 * <p>Threads: calls are issued by one thread at a time and run by one thread at a time (possibly
 * another: a communicator's background thread); the current call's sequence number and start are
 * volatile for the threads that answer status queries; the recorder and the statistics lock for
 * themselves. A call that completes allocates nothing unless a listener is registered or a JFR
 * recording takes {@code ringstar.Collective}.
 */
public final class CallObserver implements TransportProbe.WaitWatcher, TransportProbe.PeerEvents {
    private static final System.Logger LOG = System.getLogger("io.ringstar.observe");

    private final String owner;
    private final int rank;
    private final int worldSize;
    private final String jobId;
    private final Duration timeout;
    private final TransportProbe probe;
    private final FlightRecorder recorder;
    private final CollectiveTimes times = new CollectiveTimes();
    private final Path traceDir;
    private final StallWarning stall;
    private final List<CollectiveListener> listeners = new CopyOnWriteArrayList<>();
    /**
     * When each non-blocking call issued while a listener listened was issued, until it starts (on
     * another thread): its later events carry that time. Empty, and never touched, without listeners.
     */
    private final Map<Long, Long> issuedAt = new ConcurrentHashMap<>();
    private final AtomicLong issuedCalls = new AtomicLong();
    private final AtomicBoolean dumpedOnFailure = new AtomicBoolean();
    private final AtomicBoolean dumpedOnNotice = new AtomicBoolean();
    private final AtomicBoolean listenerFailed = new AtomicBoolean();

    // The current call: its number and start are read by other threads (status answers).
    private volatile long currentSequence;
    private volatile long currentStart;
    private volatile long lastCompleted;
    private volatile long lastCompletedAt;
    private volatile boolean failed;
    // The rest of the current call, for the thread that runs it.
    private String currentOperation;
    private String currentAlgorithm;
    private int currentRoot;
    private TensorLayout currentLayout;
    private long currentBytes;
    private long currentIssued;
    private long waitedBefore;
    private CollectiveJfrEvent jfrEvent;

    /**
     * @param owner what the user holds, in dump file names: {@code communicator}, {@code aggregator},
     *     {@code async-server}
     * @param probe the transport's hooks, or null for a transport that offers none
     */
    public CallObserver(DistributedConfig config, String owner, TransportProbe probe) {
        this(config, owner, probe, true);
    }

    /**
     * @param lockstep whether the ranks make the same calls in the same order (a communicator, an
     *     aggregator), so that a peer's call number says whether it is late; the async parameter
     *     server's ranks are not, and get no stall warning
     */
    public CallObserver(DistributedConfig config, String owner, TransportProbe probe, boolean lockstep) {
        this.owner = Objects.requireNonNull(owner, "owner");
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.jobId = config.option(NetworkOptions.JOB_ID_OPTION).orElse(NetworkOptions.DEFAULT_JOB_ID);
        this.timeout = config.timeout();
        this.probe = probe;
        this.recorder = new FlightRecorder(TraceOptions.TRACE_ENTRIES.value(config));
        this.traceDir = TraceOptions.TRACE_DIR.ifSet(config).orElse(null);
        this.stall = !lockstep ? null : TraceOptions.stallWarning(config)
                .map(after -> new StallWarning(rank, worldSize, after)).orElse(null);
        if (probe != null) {
            probe.answerStatusWith(this::status);
            probe.listen(this);
            probe.watchWaits(stall == null ? null : this);
        }
    }

    public void addListener(CollectiveListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    // ---- a call's life ----

    /**
     * A non-blocking call was made: numbers it and records it as issued. The same thread must then
     * start it with this number ({@link #start}).
     */
    public long issue(String operation, String algorithm, int root, TensorLayout layout) {
        long sequence = issuedCalls.incrementAndGet();
        long now = System.nanoTime();
        recorder.add(sequence, operation, algorithm, root, layout, bytesOf(layout), now, 0);
        if (!listeners.isEmpty()) {
            issuedAt.put(sequence, now);
            tell(new CollectiveEvent(rank, worldSize, sequence, operation, algorithm, root,
                    TraceFile.elements(layout), tensorsOf(layout), bytesOf(layout), CollectiveState.ISSUED, now, 0, 0,
                    0, null));
        }
        return sequence;
    }

    /**
     * A call begins to run on this thread: {@code issued} is its number from {@link #issue}, or 0
     * for a blocking call, which is numbered and recorded here. Returns the call's number.
     */
    public long start(long issued, String operation, String algorithm, int root, TensorLayout layout) {
        long now = System.nanoTime();
        long callBytes = bytesOf(layout);
        long sequence;
        if (issued > 0) {
            sequence = issued;
            recorder.started(sequence, now);
            Long issuedNanos = issuedAt.isEmpty() ? null : issuedAt.remove(issued);
            currentIssued = issuedNanos != null ? issuedNanos : now;
        } else {
            sequence = issuedCalls.incrementAndGet();
            recorder.add(sequence, operation, algorithm, root, layout, callBytes, now, now);
            currentIssued = now;
        }
        currentOperation = operation;
        currentAlgorithm = algorithm;
        currentRoot = root;
        currentLayout = layout;
        currentBytes = callBytes;
        waitedBefore = probe == null ? 0 : probe.waitedNanos();
        currentStart = now;
        currentSequence = sequence;
        if (Jfr.collectiveEnabled()) {
            jfrEvent = new CollectiveJfrEvent();
            jfrEvent.begin();
        }
        if (!listeners.isEmpty()) {
            if (issued == 0) {
                tell(event(sequence, CollectiveState.ISSUED, 0, 0, null));
            }
            tell(event(sequence, CollectiveState.STARTED, 0, 0, null));
        }
        return sequence;
    }

    /** The running call completed. */
    public void complete(long sequence) {
        long now = System.nanoTime();
        long waited = probe == null ? 0 : probe.waitedNanos() - waitedBefore;
        recorder.ended(sequence, CollectiveState.COMPLETED, now, waited, -1, null);
        times.record(currentOperation, currentBytes, now - currentStart, waited);
        lastCompletedAt = now;
        lastCompleted = sequence;
        currentSequence = 0;
        commitJfr(sequence, waited);
        if (!listeners.isEmpty()) {
            tell(event(sequence, CollectiveState.COMPLETED, now, waited, null));
        }
    }

    /**
     * The running call failed with {@code error}. A group failure (a {@link CollectiveException}
     * or an error) is the rank's first failure once: the trace is dumped then, if a directory is set.
     */
    public void fail(long sequence, Throwable error) {
        long now = System.nanoTime();
        long waited = probe == null ? 0 : probe.waitedNanos() - waitedBefore;
        int peer = error instanceof CollectiveException ? ((CollectiveException) error).peerRank() : -1;
        recorder.ended(sequence, CollectiveState.FAILED, now, waited, peer, describe(error));
        boolean groupFailure = error instanceof CollectiveException || error instanceof Error;
        if (groupFailure) {
            failed = true;
        }
        currentSequence = 0;
        commitJfr(sequence, waited);
        if (!listeners.isEmpty()) {
            tell(event(sequence, CollectiveState.FAILED, now, waited, error));
        }
        if (groupFailure && traceDir != null && dumpedOnFailure.compareAndSet(false, true)) {
            dumpQuietly("failure: " + describe(error));
        }
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
        // An issued call has not started, even a blocking one that starts at once (CollectiveEvent#startedNanos).
        long started = state == CollectiveState.ISSUED ? 0 : currentStart;
        return new CollectiveEvent(rank, worldSize, sequence, currentOperation, currentAlgorithm, currentRoot,
                TraceFile.elements(currentLayout), tensorsOf(currentLayout), currentBytes, state, currentIssued,
                started, ended, waited, error);
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

    // ---- what the peers ask, and what they tell ----

    /** This rank's answer to a status query ({@link RankStatus}). */
    long status() {
        long now = System.nanoTime();
        long sequence = currentSequence;
        if (failed) {
            return RankStatus.pack(RankStatus.FAILED, Math.max(sequence, lastCompleted), 0);
        }
        if (sequence != 0) {
            return RankStatus.pack(RankStatus.IN_CALL, sequence, now - currentStart);
        }
        long completed = lastCompleted;
        return completed == 0 ? RankStatus.pack(RankStatus.NO_CALL, 0, 0)
                : RankStatus.pack(RankStatus.BETWEEN_CALLS, completed, now - lastCompletedAt);
    }

    /** A long wait of the running call: the stall warning's turn (see {@link StallWarning}). */
    @Override
    public void waiting(TransportProbe transport) {
        long sequence = currentSequence;
        if (stall != null && sequence != 0) {
            stall.check(transport, currentOperation, sequence, currentStart);
        }
    }

    @Override
    public void peerFailed(int peer, String reason) {
        if (Jfr.peerFailureEnabled()) {
            PeerFailureJfrEvent event = new PeerFailureJfrEvent();
            event.rank = rank;
            event.peer = peer;
            event.worldSize = worldSize;
            event.reason = reason;
            event.commit();
        }
        dumpBetweenCalls("peer failure: rank " + peer + ": " + reason);
    }

    @Override
    public void failureReported(int peer, int originRank) {
        dumpBetweenCalls("failure reported by rank " + peer + " (first on rank " + originRank + ")");
    }

    /**
     * A rank in no call learns of a failure only from its transport: its next call would fail and
     * dump, but it may never make one (it is the rank that stopped calling), so it dumps now, on a
     * thread of its own (this one may hold the transport's lock, or be a peer's).
     */
    private void dumpBetweenCalls(String reason) {
        if (traceDir == null || currentSequence != 0 || !dumpedOnNotice.compareAndSet(false, true)) {
            return;
        }
        Thread writer = new Thread(() -> dumpQuietly(reason), "ringstar-trace-rank" + rank);
        writer.setDaemon(true);
        writer.start();
    }

    // ---- dumps and statistics ----

    /**
     * Writes the flight recorder into {@code dir} (made if missing) as one JSON file and returns
     * its path; may be called from any thread at any time.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     */
    public Path dumpTrace(Path dir, String reason) {
        long running = currentSequence;
        long waited = running != 0 && probe != null ? probe.waitedNanos() - waitedBefore : 0;
        int waitingOn = running != 0 && probe != null ? probe.waitingOn() : -1;
        FlightRecorder.Snapshot snapshot = recorder.snapshot(waited, waitingOn);
        TraceFile.Header header = new TraceFile.Header(jobId, owner, rank, worldSize, host(),
                ProcessHandle.current().pid(), reason, System.currentTimeMillis(), System.nanoTime(),
                timeout.toNanos(), recorder.capacity());
        return TraceFile.write(dir, header, snapshot);
    }

    private void dumpQuietly(String reason) {
        try {
            Path file = dumpTrace(traceDir, reason);
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + " wrote its last " + recorder.capacity()
                    + " collectives to " + file + " (read them with: ringstar report hang " + traceDir + ")");
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + " could not write its trace: " + e);
        }
    }

    public CollectiveStatistics statistics() {
        return times.snapshot(rank);
    }

    private static String host() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException | SecurityException e) {
            String fromEnvironment = System.getenv("HOSTNAME");
            return fromEnvironment != null ? fromEnvironment : "unknown";
        }
    }

    static String describe(Throwable error) {
        return error.getClass().getSimpleName() + ": " + error.getMessage();
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
