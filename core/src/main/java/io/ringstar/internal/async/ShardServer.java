package io.ringstar.internal.async;

import io.ringstar.AsyncSettings;
import io.ringstar.AsyncStatistics;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Deadline;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.internal.protocol.FailureKind;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * One server rank of the asynchronous parameter server: its {@link ShardState} (range of the
 * parameters, optimizer state, version, worker clocks, staleness bound) and the messages to and
 * from the workers. One daemon thread per worker receives from it and sends to it, so each link is
 * used by one thread per direction; {@link #serve} ends them all before it returns (after a
 * failure it waits two timeouts at most for them; they are daemons). Messages as in
 * {@link AsyncMessages}.
 */
public final class ShardServer {
    private final Transport transport;
    private final int rank;
    private final int servers;
    private final int workers;
    private final long total;
    private final long offset;
    private final int length;
    private final Duration timeout;
    private final String operation;
    private final ShardState state;
    private final AtomicBoolean served = new AtomicBoolean();

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
        this.timeout = transport.timeout();
        this.operation = operation;
        ShardCheckpoints checkpoints = settings.checkpointDirectory().map(root -> new ShardCheckpoints(root, rank,
                identity(settings), settings.optimizer().stateArrays(), workers)).orElse(null);
        this.state = new ShardState(rank, servers, workers, total, offset, length, settings, timeout, operation,
                checkpoints);
    }

    private Map<String, String> identity(AsyncSettings settings) {
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

    /** This server's counts so far. */
    public AsyncStatistics statistics() {
        return state.statistics();
    }

    /**
     * Serves every worker until each has finished; see {@code AsyncParameterServer.serve}.
     *
     * @param initialRange makes this server's range of the initial parameters (checking them), used
     *     unless a checkpoint is resumed; what it throws is told to the workers, then thrown
     * @throws IllegalStateException if called before, without telling the workers anything
     */
    public AsyncStatistics serve(Supplier<float[]> initialRange) {
        if (!served.compareAndSet(false, true)) {
            // The first call served (or is serving) the workers; an ABORT now would reach them as nonsense.
            throw new IllegalStateException(operation + " on rank " + rank + ": serve called twice");
        }
        try {
            state.start(initialRange.get());
        } catch (RuntimeException | Error e) {
            // Parameters of other shapes or a checkpoint of another run, say: the workers hear it now instead of
            // waiting for their timeout.
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
        // Every worker starts from the same version: the START messages are packed before any thread runs.
        List<ByteBuffer[]> starts = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            starts.add(state.startMessage(w));
        }
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            int worker = w;
            Thread thread = new Thread(() -> serveWorker(worker, starts.get(worker)),
                    "ringstar-async-server-" + rank + "-for-rank-" + (servers + w));
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        awaitThreads(threads);
        return state.end();
    }

    /**
     * Each thread's waits are bounded by the timeout, so each ends; a thread that is still alive
     * after two timeouts in which nothing moved (no push, pull or finish) is a bug, reported rather
     * than waited for forever. After that failure (or an interrupt) the threads, woken by it, still
     * get two timeouts to tell their workers and end: a receive in progress ends within one.
     */
    private void awaitThreads(List<Thread> threads) {
        try {
            for (Thread thread : threads) {
                long seen = -1;
                while (thread.isAlive()) {
                    long now = state.progress();
                    if (now == seen) {
                        state.fail(new CollectiveTimeoutException(operation, rank, CollectiveException.NO_RANK,
                                thread.getName() + " did not end within two timeouts in which nothing moved"));
                        joinAll(threads);
                        return;
                    }
                    seen = now;
                    thread.join(Math.max(1, timeout.multipliedBy(2).toMillis()));
                }
            }
        } catch (InterruptedException e) {
            state.fail(new CollectiveException(operation, rank, CollectiveException.NO_RANK,
                    "interrupted while serving the workers", e));
            joinAll(threads);
            Thread.currentThread().interrupt();
        }
    }

    /** Waits for the threads to end, two timeouts at most in all; one that still runs is left (it is a daemon). */
    private void joinAll(List<Thread> threads) {
        Deadline deadline = Deadline.after(timeout.multipliedBy(2));
        boolean interrupted = false;
        for (Thread thread : threads) {
            long left = deadline.remainingNanos();
            while (thread.isAlive() && left > 0) {
                try {
                    thread.join(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    // Asked to stop: the join goes on within its bound, and the caller sees the interrupt after.
                    interrupted = true;
                }
                left = deadline.remainingNanos();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** One worker's thread: START, then PUSH and PULL answered until FINISH, ABORT or a failure. */
    private void serveWorker(int worker, ByteBuffer[] start) {
        int peer = servers + worker;
        ByteBuffer in = AsyncMessages.receiveBuffer(length);
        ByteBuffer header = AsyncMessages.allocate(AsyncMessages.HEADER_BYTES);
        ByteBuffer payload = AsyncMessages.allocate(4L * length);
        float[] gradient = new float[length];
        try {
            transport.send(peer, start[0], start[1]);
            while (true) {
                in.clear();
                int received = transport.recvAtMost(peer, in, timeout);
                AsyncMessages.Header message = AsyncMessages.read(in, received, servers, operation, rank, peer);
                if (message.kind() == AsyncMessages.ABORT) {
                    state.fail(AsyncFailures.told(message, in, operation, rank, peer, "worker"));
                    return;
                }
                if (state.failure() != null) {
                    sendAbort(peer);
                    return;
                }
                switch (message.kind()) {
                    case AsyncMessages.PUSH -> {
                        AsyncMessages.checkPart(message, total, offset, length, operation, rank, peer);
                        AsyncMessages.getFloats(in, message, gradient, 0);
                        if (!state.applyAndAwaitTurn(worker, message, gradient, header, payload)) {
                            sendAbort(peer);
                            return;
                        }
                    }
                    case AsyncMessages.PULL -> {
                        state.pulled();
                        state.pack(header, payload, AsyncMessages.PARAMS, message.step());
                    }
                    case AsyncMessages.FINISH -> {
                        finish(worker, message, header, payload);
                        return;
                    }
                    default -> throw new CollectiveMismatchException(operation, rank, peer, "expected PUSH, PULL or "
                            + "FINISH from worker rank " + peer + ", got " + AsyncMessages.name(message.kind()));
                }
                transport.send(peer, header, payload);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            state.fail(new CollectiveException(operation, rank, peer, "interrupted while serving worker rank " + peer,
                    e));
            sendAbort(peer);
        } catch (CollectiveException e) {
            // A worker that fails tells the servers, then its process ends: its reason may wait behind the closed link.
            CollectiveException told = e instanceof PeerFailureException
                    ? AsyncFailures.queuedAbort(transport, peer, in, servers, operation, "worker") : null;
            if (told != null) {
                state.fail(told);
                return;
            }
            state.fail(AsyncFailures.about(e, operation, rank, peer, "serving worker rank " + peer + ": "
                    + e.getMessage()));
            sendAbort(peer);
        } catch (RuntimeException | Error e) {
            state.fail(new CollectiveException(operation, rank, peer, "serving worker rank " + peer + " failed: " + e,
                    e));
            sendAbort(peer);
        }
    }

    /** FINISH: marks the worker done, waits for the others (telling it while they progress), sends FINAL. */
    private void finish(int worker, AsyncMessages.Header message, ByteBuffer header, ByteBuffer payload)
            throws InterruptedException {
        int peer = servers + worker;
        ShardState.FinishWait wait = state.finish(worker, message);
        while (true) {
            byte reply = state.awaitOthers(worker, wait, header, payload);
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

    /** Tells a worker the training failed, naming the rank the failure is about; best effort. */
    private void sendAbort(int peer) {
        CollectiveException reason = state.failure();
        int about = reason == null || reason.peerRank() == CollectiveException.NO_RANK ? rank : reason.peerRank();
        try {
            transport.send(peer, AsyncMessages.abort(servers, about, reason == null ? FailureKind.OTHER.code()
                    : AsyncFailures.code(reason),
                    "server rank " + rank + " stopped: " + (reason == null ? "failed" : reason.getMessage())));
        } catch (RuntimeException ignored) {
            // The worker or its link is gone; the failure is recorded and serve() throws it.
        }
    }
}
