package io.ringstar.internal.observe;

import io.ringstar.DistributedConfig;
import io.ringstar.config.NetworkOptions;
import io.ringstar.config.TraceOptions;
import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.CollectiveState;
import io.ringstar.spi.TransportProbe;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one rank's transport carries, call after call, whichever communicator or aggregator makes
 * the calls: their numbers, the flight recorder, where the rank is now (what it answers a peer's
 * status query), the stall warning and the trace dumps. One per transport: the training loops lend
 * one transport to several aggregators (a ring and a star, an aggregator and a communicator), and a
 * peer can only tell whether this rank is late if every call on the transport is numbered in one
 * sequence, which ranks that make the same calls share. The first communicator or aggregator made
 * on a transport sets its options ({@value TraceOptions#TRACE_ENTRIES_OPTION},
 * {@value TraceOptions#TRACE_DIR_OPTION}, {@value TraceOptions#STALL_WARNING_OPTION}).
 *
 * <p>Threads: calls are issued and run one at a time per transport (possibly by different threads);
 * the current call's number and start are volatile for the threads that answer status queries; the
 * recorder locks for itself.
 */
final class TransportTrace implements TransportProbe.WaitWatcher, TransportProbe.PeerEvents {
    private static final System.Logger LOG = System.getLogger("io.ringstar.observe");
    /** How recent a blocking round must be for a status answer to say "blocked on a peer". */
    private static final long BLOCKED_RECENTLY_NANOS = 100_000_000L;
    /** The trace of each observed transport, found again by the next communicator or aggregator made on it. */
    private static final Map<TransportProbe, TransportTrace> BY_TRANSPORT = Collections.synchronizedMap(
            new WeakHashMap<>());

    private final int rank;
    private final int worldSize;
    private final String jobId;
    private final Duration timeout;
    /**
     * The transport, weakly: the registry's value must not hold its key, or no transport would ever
     * be collected (the transport holds this trace through its hooks, which is fine).
     */
    private final WeakReference<TransportProbe> probe;
    private final FlightRecorder recorder;
    private final Path traceDir;
    private final StallWarning stall;
    private final AtomicLong calls = new AtomicLong();
    private final AtomicBoolean dumpedOnFailure = new AtomicBoolean();
    private final AtomicBoolean dumpedOnNotice = new AtomicBoolean();
    private volatile String owners;

    private volatile long currentSequence;
    /** When a wait of this rank last blocked ({@link #waiting}); 0 before any. */
    private volatile long lastBlocked;
    private volatile long currentStart;
    private volatile String currentOperation;
    private volatile long lastCompleted;
    private volatile long lastCompletedAt;
    private volatile boolean failed;
    /** {@link TransportProbe#waitedNanos()} when the current call started. */
    private volatile long waitedBefore;

    private TransportTrace(DistributedConfig config, String owner, TransportProbe probe, boolean lockstep) {
        host();
        this.rank = config.rank();
        this.worldSize = config.worldSize();
        this.jobId = config.option(NetworkOptions.JOB_ID_OPTION).orElse(NetworkOptions.DEFAULT_JOB_ID);
        this.timeout = config.timeout();
        this.probe = new WeakReference<>(probe);
        this.owners = owner;
        this.recorder = new FlightRecorder(TraceOptions.TRACE_ENTRIES.value(config));
        this.traceDir = TraceOptions.TRACE_DIR.ifSet(config).orElse(null);
        this.stall = !lockstep ? null : TraceOptions.stallWarning(config)
                .map(after -> new StallWarning(rank, worldSize, after)).orElse(null);
    }

    /**
     * The trace of {@code probe}'s transport, made (with {@code config}'s options) and hooked into
     * the transport on first use; a trace of its own for a transport without hooks (null).
     *
     * @param lockstep whether the ranks make the same calls in the same order, so that a peer's call
     *     number says whether it is late; the async parameter server's ranks do not, and its trace
     *     warns of no stall
     */
    static TransportTrace of(DistributedConfig config, String owner, TransportProbe probe, boolean lockstep) {
        if (probe == null || !lockstep) {
            // The async server's ranks make different numbers of calls: sharing the transport's
            // numbering with a communicator would put that one's calls out of step across ranks, so
            // it keeps its own, and answers no status queries (they are about lockstep calls).
            return new TransportTrace(config, owner, probe, lockstep);
        }
        synchronized (BY_TRANSPORT) {
            TransportTrace existing = BY_TRANSPORT.get(probe);
            if (existing != null) {
                if (!existing.owners.contains(owner)) {
                    existing.owners = existing.owners + "+" + owner;
                }
                return existing;
            }
            TransportTrace made = new TransportTrace(config, owner, probe, lockstep);
            probe.answerStatusWith(made::status);
            probe.listen(made);
            // Always: a long wait also tells the status answers that this rank is blocked, not computing.
            probe.watchWaits(made);
            BY_TRANSPORT.put(probe, made);
            return made;
        }
    }

    // ---- a call's life ----

    /** Numbers a call issued now and records it as issued. */
    long issue(String operation, String algorithm, int root, TensorLayout layout, long bytes, long now) {
        long sequence = calls.incrementAndGet();
        recorder.add(sequence, operation, algorithm, root, layout, bytes, now, 0);
        return sequence;
    }

    /** A call starts: {@code issued} from {@link #issue}, or 0 to number and record it now. Returns its number. */
    long start(long issued, String operation, String algorithm, int root, TensorLayout layout, long bytes,
            long now) {
        long sequence;
        if (issued > 0) {
            sequence = issued;
            recorder.started(sequence, now);
        } else {
            sequence = calls.incrementAndGet();
            recorder.add(sequence, operation, algorithm, root, layout, bytes, now, now);
        }
        waitedBefore = waitedNanos();
        currentOperation = operation;
        currentStart = now;
        currentSequence = sequence;
        return sequence;
    }

    /** When {@code sequence} was issued, or {@code fallback} if the recorder no longer has it. */
    long issuedAt(long sequence, long fallback) {
        return recorder.issuedAt(sequence, fallback);
    }

    /** How long the current call has waited for peers so far. */
    long waitedSinceStart() {
        return waitedNanos() - waitedBefore;
    }

    void completed(long sequence, long now, long waited) {
        recorder.ended(sequence, CollectiveState.COMPLETED, now, waited, -1, null);
        lastCompletedAt = now;
        lastCompleted = sequence;
        if (currentSequence == sequence) {
            currentSequence = 0;
        }
    }

    /**
     * The call failed. A group failure is the rank's first failure once: the trace is dumped then,
     * if a directory is set, on this thread, before the exception reaches the caller.
     */
    void failed(long sequence, long now, long waited, int peer, Throwable error, boolean groupFailure) {
        recorder.ended(sequence, CollectiveState.FAILED, now, waited, peer, describe(error));
        if (groupFailure) {
            failed = true;
        }
        if (currentSequence == sequence) {
            currentSequence = 0;
        }
        if (groupFailure && traceDir != null && dumpedOnFailure.compareAndSet(false, true)) {
            dumpQuietly("failure: " + describe(error));
        }
    }

    private long waitedNanos() {
        TransportProbe transport = probe.get();
        return transport == null ? 0 : transport.waitedNanos();
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
            // Blocked now if a wait of this call blocked in the last moments (each blocking round is a few ms).
            long blocked = lastBlocked;
            boolean waiting = blocked - currentStart > 0 && now - blocked < BLOCKED_RECENTLY_NANOS;
            return RankStatus.pack(RankStatus.IN_CALL, sequence, now - currentStart, waiting);
        }
        long completed = lastCompleted;
        return completed == 0 ? RankStatus.pack(RankStatus.NO_CALL, 0, 0)
                : RankStatus.pack(RankStatus.BETWEEN_CALLS, completed, now - lastCompletedAt);
    }

    /**
     * A long wait of the running call, one of its blocking rounds: noted for the status answers (a
     * rank still in an earlier call but blocked on a peer is not the late one), and the stall
     * warning's turn (see {@link StallWarning}).
     */
    @Override
    public void waiting(TransportProbe transport) {
        lastBlocked = System.nanoTime();
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
        if (traceDir == null || currentSequence != 0 || failed || !dumpedOnNotice.compareAndSet(false, true)) {
            return;
        }
        Thread writer = new Thread(() -> dumpQuietly(reason), "ringstar-trace-rank" + rank);
        writer.setDaemon(true);
        writer.start();
    }

    // ---- dumps ----

    /** Writes the flight recorder into {@code dir} as one JSON file ({@link TraceFile}); any thread. */
    Path dump(Path dir, String reason) {
        long running = currentSequence;
        long waited = running != 0 ? waitedSinceStart() : 0;
        TransportProbe transport = probe.get();
        int waitingOn = running != 0 && transport != null ? transport.waitingOn() : -1;
        FlightRecorder.Snapshot snapshot = recorder.snapshot(waited, waitingOn);
        TraceFile.Header header = new TraceFile.Header(jobId, owners, rank, worldSize, host(),
                ProcessHandle.current().pid(), reason, System.currentTimeMillis(), System.nanoTime(),
                timeout.toNanos(), recorder.capacity());
        return TraceFile.write(dir, header, snapshot);
    }

    private void dumpQuietly(String reason) {
        try {
            Path file = dump(traceDir, reason);
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + " wrote its last collectives (at most "
                    + recorder.capacity() + ") to " + file + " (read them with: ringstar report hang " + traceDir
                    + ")");
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + " could not write its trace: " + e);
        }
    }

    private static String host() {
        return Host.NAME;
    }

    /**
     * This host's name, looked up once, when the first trace is made (a lookup can take seconds
     * where the name does not resolve, and a dump must not wait for it): the environment's
     * {@code HOSTNAME} if set, else the resolver's.
     */
    private static final class Host {
        static final String NAME = lookUp();

        private static String lookUp() {
            String fromEnvironment = System.getenv("HOSTNAME");
            if (fromEnvironment != null && !fromEnvironment.isBlank()) {
                return fromEnvironment;
            }
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException | SecurityException e) {
                return "unknown";
            }
        }
    }

    static String describe(Throwable error) {
        return error.getClass().getSimpleName() + ": " + error.getMessage();
    }
}
