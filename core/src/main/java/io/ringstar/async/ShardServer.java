package io.ringstar.async;

import io.ringstar.AsyncSettings;
import io.ringstar.AsyncStatistics;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One server rank of the asynchronous parameter server: its range of the parameters, the
 * optimizer state of that range, its version (updates applied), each worker's clock (that worker's
 * gradients applied), the staleness bound and the checkpoints. One daemon thread per worker
 * receives from it and sends to it (so each link is used by one thread per direction); everything
 * shared is guarded by one lock. Messages as in {@link AsyncMessages}.
 */
public final class ShardServer {
    private final Transport transport;
    private final int rank;
    private final int servers;
    private final int workers;
    private final long total;
    private final long offset;
    private final int length;
    private final AsyncSettings settings;
    private final Duration timeout;
    private final String operation;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private float[] parameters;
    private float[][] optimizerState;
    private final long[] clock;
    private final boolean[] done;
    private long version;
    /** Counts updates and finishes: what a wait for the others may see move. */
    private long progress;
    private long maxLead;
    private long heldBack;
    private long maxGradientAge;
    private CollectiveException failure;
    private final ShardCheckpoints checkpoints;

    /**
     * @param transport the group's transport, this rank a server ({@code rank < servers})
     * @param servers ranks {@code 0 … servers-1} serve, the others work
     * @param total the number of parameter elements, all tensors together
     */
    public ShardServer(Transport transport, int servers, long total, AsyncSettings settings, String operation) {
        this.transport = transport;
        this.rank = transport.rank();
        this.servers = servers;
        this.workers = transport.worldSize() - servers;
        this.total = total;
        ParameterPartition partition = new ParameterPartition(total, servers);
        this.offset = partition.offset(rank);
        this.length = partition.length(rank);
        this.settings = settings;
        this.timeout = transport.timeout();
        this.operation = operation;
        this.clock = new long[workers];
        this.done = new boolean[workers];
        this.checkpoints = settings.checkpointDirectory().map(root -> new ShardCheckpoints(root, rank, identity(),
                settings.optimizer().stateArrays(), workers)).orElse(null);
    }

    private Map<String, String> identity() {
        Map<String, String> identity = new LinkedHashMap<>(settings.checkpointMetadata());
        identity.put("servers", Integer.toString(servers));
        identity.put("server", Integer.toString(rank));
        identity.put("workers", Integer.toString(workers));
        identity.put("parameter-elements", Long.toString(total));
        identity.put("range", offset + "+" + length);
        identity.put("optimizer", settings.optimizer().describe());
        return identity;
    }

    /** The first element of this server's range. */
    public long offset() {
        return offset;
    }

    /** The elements of this server's range. */
    public int length() {
        return length;
    }

    /**
     * Serves every worker until each has finished; see {@code AsyncParameterServer.serve}.
     *
     * @param initialRange this server's range of the initial parameters, used unless a checkpoint is resumed
     */
    public AsyncStatistics serve(float[] initialRange) {
        if (parameters != null) {
            throw new IllegalStateException(operation + " on rank " + rank + ": serve called twice");
        }
        try {
            restoreOrStart(initialRange);
        } catch (RuntimeException | Error e) {
            // A checkpoint of another run, say: the workers hear it now instead of waiting for their timeout.
            for (int w = 0; w < workers; w++) {
                try {
                    transport.send(servers + w, AsyncMessages.abort(servers, rank, 0, "server rank " + rank
                            + " could not start: " + e.getMessage()));
                } catch (RuntimeException ignored) {
                    // That worker is gone already.
                }
            }
            throw e;
        }
        // Every worker starts from the same version, taken before any thread can apply an update.
        ByteBuffer start = AsyncMessages.allocate(4L * length);
        start.asFloatBuffer().put(parameters);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            int worker = w;
            ByteBuffer startHeader = AsyncMessages.Header.of(AsyncMessages.START, servers, version, clock[w], total,
                    offset, 4 * length).writeTo(AsyncMessages.allocate(AsyncMessages.HEADER_BYTES));
            ByteBuffer startPayload = start.duplicate();
            Thread thread = new Thread(() -> serveWorker(worker, startHeader, startPayload),
                    "ringstar-async-server-" + rank + "-for-rank-" + (servers + w));
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        awaitThreads(threads);
        lock.lock();
        try {
            if (failure != null) {
                throw failure;
            }
            if (checkpoints != null) {
                checkpoints.save(version, parameters, optimizerState, clock);
            }
            return statistics();
        } finally {
            lock.unlock();
        }
    }

    /** This server's counts so far. */
    public AsyncStatistics statistics() {
        lock.lock();
        try {
            return new AsyncStatistics(version, maxLead, heldBack, maxGradientAge);
        } finally {
            lock.unlock();
        }
    }

    /** A copy of this server's range of the parameters as they are now. */
    public float[] parameters() {
        lock.lock();
        try {
            return parameters.clone();
        } finally {
            lock.unlock();
        }
    }

    private void restoreOrStart(float[] initialRange) {
        parameters = initialRange.clone();
        optimizerState = new float[settings.optimizer().stateArrays()][length];
        if (checkpoints != null && settings.resume()) {
            checkpoints.load(length).ifPresent(state -> {
                parameters = state.parameters();
                optimizerState = state.optimizerState();
                version = state.version();
                System.arraycopy(state.clocks(), 0, clock, 0, workers);
            });
        }
    }

    /**
     * Each thread's waits are bounded by the timeout, so each ends; a thread that is still alive
     * after a timeout in which nothing moved is a bug, reported rather than waited for forever.
     */
    private void awaitThreads(List<Thread> threads) {
        try {
            for (Thread thread : threads) {
                long seen = -1;
                while (thread.isAlive()) {
                    long now = currentProgress();
                    if (now == seen) {
                        fail(new CollectiveTimeoutException(operation, rank, CollectiveException.NO_RANK,
                                thread.getName() + " did not end within two timeouts in which nothing moved"));
                        return;
                    }
                    seen = now;
                    thread.join(Math.max(1, timeout.multipliedBy(2).toMillis()));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(new CollectiveException(operation, rank, CollectiveException.NO_RANK,
                    "interrupted while serving the workers", e));
        }
    }

    private long currentProgress() {
        lock.lock();
        try {
            return progress;
        } finally {
            lock.unlock();
        }
    }

    /** One worker's thread: START, then PUSH and PULL answered until FINISH, ABORT or a failure. */
    private void serveWorker(int worker, ByteBuffer startHeader, ByteBuffer startPayload) {
        int peer = servers + worker;
        ByteBuffer in = AsyncMessages.receiveBuffer(length);
        ByteBuffer header = AsyncMessages.allocate(AsyncMessages.HEADER_BYTES);
        ByteBuffer payload = AsyncMessages.allocate(4L * length);
        float[] gradient = new float[length];
        try {
            transport.send(peer, startHeader, startPayload);
            while (true) {
                in.clear();
                int received = transport.recvAtMost(peer, in, timeout);
                AsyncMessages.Header message = AsyncMessages.read(in, received, servers, operation, rank, peer);
                if (message.kind() == AsyncMessages.ABORT) {
                    fail(AsyncFailures.told(message, in, operation, rank, peer, "worker"));
                    return;
                }
                if (failed()) {
                    sendAbort(peer);
                    return;
                }
                switch (message.kind()) {
                    case AsyncMessages.PUSH -> {
                        AsyncMessages.checkPart(message, total, offset, length, operation, rank, peer);
                        AsyncMessages.getFloats(in, message, gradient, 0);
                        if (!applyAndAwaitTurn(worker, message, gradient, header, payload)) {
                            sendAbort(peer);
                            return;
                        }
                    }
                    case AsyncMessages.PULL -> {
                        lock.lock();
                        try {
                            pack(header, payload, AsyncMessages.PARAMS, message.step());
                        } finally {
                            lock.unlock();
                        }
                    }
                    case AsyncMessages.FINISH -> {
                        finish(worker, peer, message, header, payload);
                        return;
                    }
                    default -> throw new CollectiveMismatchException(operation, rank, peer, "expected PUSH, PULL or "
                            + "FINISH from worker rank " + peer + ", got " + AsyncMessages.name(message.kind()));
                }
                transport.send(peer, header, payload);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(new CollectiveException(operation, rank, peer, "interrupted while serving worker rank " + peer, e));
            sendAbort(peer);
        } catch (CollectiveException e) {
            // A worker that fails tells the servers, then its process ends: its reason may wait behind the closed link.
            CollectiveException told = e instanceof PeerFailureException
                    ? AsyncFailures.queuedAbort(transport, peer, in, servers, operation, "worker") : null;
            if (told != null) {
                fail(told);
                return;
            }
            fail(AsyncFailures.about(e, operation, rank, peer, "serving worker rank " + peer + ": " + e.getMessage()));
            sendAbort(peer);
        } catch (RuntimeException | Error e) {
            fail(new CollectiveException(operation, rank, peer, "serving worker rank " + peer + " failed: " + e, e));
            sendAbort(peer);
        }
    }

    /**
     * Applies one gradient (unless this server applied that step of that worker before a resume),
     * holds the reply back while the staleness bound says so, then packs the reply.
     *
     * @return false if the training failed meanwhile
     */
    private boolean applyAndAwaitTurn(int worker, AsyncMessages.Header message, float[] gradient, ByteBuffer header,
            ByteBuffer payload) throws InterruptedException {
        int peer = servers + worker;
        lock.lock();
        try {
            if (message.step() > clock[worker]) {
                throw new CollectiveMismatchException(operation, rank, peer, "worker rank " + peer + " pushed step "
                        + message.step() + ", but this server has applied " + clock[worker] + " of its gradients");
            }
            if (message.step() < clock[worker]) {
                // Applied before a resume, whose checkpoint of this server is newer than another's: answered, not
                // applied again, and not held back (the servers that still apply it hold the worker back).
                pack(header, payload, AsyncMessages.PARAMS, message.step());
                return true;
            }
            settings.optimizer().apply(parameters, gradient, optimizerState);
            maxGradientAge = Math.max(maxGradientAge, version - message.version());
            version++;
            progress++;
            clock[worker]++;
            changed.signalAll();
            if (checkpoints != null && settings.checkpointEvery() > 0 && version % settings.checkpointEvery() == 0) {
                checkpoints.save(version, parameters, optimizerState, clock);
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            boolean waited = false;
            while (failure == null && clock[worker] - slowestClock() > settings.maxStaleness()) {
                waited = true;
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    int slowest = servers + slowestWorker();
                    throw new CollectiveTimeoutException(operation, rank, slowest, "worker rank " + peer + " is "
                            + (clock[worker] - slowestClock()) + " updates ahead of worker rank " + slowest
                            + " (bound " + settings.maxStaleness() + "), which pushed nothing for " + timeout);
                }
                changed.awaitNanos(left);
            }
            if (failure != null) {
                return false;
            }
            if (waited) {
                heldBack++;
            }
            maxLead = Math.max(maxLead, clock[worker] - slowestClock());
            pack(header, payload, AsyncMessages.PARAMS, message.step());
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** FINISH: marks the worker done, waits for the others (telling it while they progress), sends FINAL. */
    private void finish(int worker, int peer, AsyncMessages.Header message, ByteBuffer header, ByteBuffer payload)
            throws InterruptedException {
        long heartbeat = Math.max(1, timeout.toNanos() / 4);
        long seen;
        lock.lock();
        try {
            if (message.step() != clock[worker]) {
                throw new CollectiveMismatchException(operation, rank, peer, "worker rank " + peer + " finished after "
                        + message.step() + " steps; this server applied " + clock[worker] + " of its gradients");
            }
            done[worker] = true;
            progress++;
            seen = progress;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            byte reply = 0;
            lock.lock();
            try {
                long until = System.nanoTime() + heartbeat;
                while (failure == null && !allDone() && until - System.nanoTime() > 0) {
                    changed.awaitNanos(until - System.nanoTime());
                }
                if (failure != null) {
                    reply = AsyncMessages.ABORT;
                } else if (allDone()) {
                    reply = AsyncMessages.FINAL;
                    pack(header, payload, AsyncMessages.FINAL, clock[worker]);
                } else if (progress != seen) {
                    // Others still train: tell the worker, whose wait for FINAL then starts afresh.
                    seen = progress;
                    deadline = System.nanoTime() + timeout.toNanos();
                    reply = AsyncMessages.WAITING;
                    AsyncMessages.Header.of(AsyncMessages.WAITING, servers, version, clock[worker], total, offset, 0)
                            .writeTo(header);
                } else if (System.nanoTime() - deadline >= 0) {
                    int slowest = servers + slowestWorker();
                    throw new CollectiveTimeoutException(operation, rank, slowest, "worker rank " + slowest
                            + " neither pushed nor finished for " + timeout + " while worker rank " + peer
                            + " waited for every worker to finish");
                }
            } finally {
                lock.unlock();
            }
            if (reply == AsyncMessages.ABORT) {
                sendAbort(peer);
                return;
            } else if (reply == AsyncMessages.FINAL) {
                transport.send(peer, header, payload);
                return;
            } else if (reply == AsyncMessages.WAITING) {
                transport.send(peer, header);
            }
        }
    }

    /** Writes a reply's header and this server's range into the buffers, flipped; the caller holds the lock. */
    private void pack(ByteBuffer header, ByteBuffer payload, byte kind, long step) {
        new AsyncMessages.Header(kind, servers, version, step, total, offset, 4 * length, -1, maxLead, heldBack,
                maxGradientAge).writeTo(header);
        payload.clear();
        payload.asFloatBuffer().put(parameters);
        payload.limit(4 * length);
    }

    /** Whether every worker has finished; the caller holds the lock. */
    private boolean allDone() {
        for (boolean finished : done) {
            if (!finished) {
                return false;
            }
        }
        return true;
    }

    /** Lowest clock among the workers still training; the caller holds the lock. */
    private long slowestClock() {
        long lowest = Long.MAX_VALUE;
        for (int w = 0; w < workers; w++) {
            if (!done[w]) {
                lowest = Math.min(lowest, clock[w]);
            }
        }
        return lowest == Long.MAX_VALUE ? 0 : lowest;
    }

    /** The unfinished worker with the lowest clock (index among the workers); the caller holds the lock. */
    private int slowestWorker() {
        int slowest = -1;
        for (int w = 0; w < workers; w++) {
            if (!done[w] && (slowest < 0 || clock[w] < clock[slowest])) {
                slowest = w;
            }
        }
        return Math.max(slowest, 0);
    }

    private boolean failed() {
        lock.lock();
        try {
            return failure != null;
        } finally {
            lock.unlock();
        }
    }

    /** Records the first failure and wakes every thread, which then tells its worker. */
    private void fail(CollectiveException e) {
        lock.lock();
        try {
            if (failure == null) {
                failure = e;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Tells a worker the training failed, naming the rank the failure is about; best effort. */
    private void sendAbort(int peer) {
        CollectiveException reason;
        lock.lock();
        try {
            reason = failure;
        } finally {
            lock.unlock();
        }
        int about = reason == null || reason.peerRank() == CollectiveException.NO_RANK ? rank : reason.peerRank();
        try {
            transport.send(peer, AsyncMessages.abort(servers, about, reason == null ? 0 : AsyncFailures.code(reason),
                    "server rank " + rank + " stopped: "
                    + (reason == null ? "failed" : reason.getMessage())));
        } catch (RuntimeException ignored) {
            // The worker or its link is gone; the failure is recorded and serve() throws it.
        }
    }
}
