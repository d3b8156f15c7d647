package io.ringstar.train;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.bench.Algorithm;
import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.tensor.TensorMemory;
import io.ringstar.train.data.Dataset;
import io.ringstar.train.model.Network;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Asynchronous parameter-server training over a {@link Transport}, messages as in
 * {@link AsyncMessage}. Rank 0 serves and computes no gradients; ranks 1..N-1 are workers.
 *
 * <h2>Protocol</h2>
 * The server sends every worker the initial parameters (version 0). A worker then repeats, for
 * each of its steps: compute the gradient of its batch on the parameters it holds, send it with
 * their version, wait for the reply with fresh parameters. It ends with a DONE message. The server
 * runs one thread per worker; each receives that worker's gradients, applies them under one lock
 * as they arrive ({@code params -= lr * gradient}; the version counts the gradients applied) and
 * replies with the then current parameters. Workers never wait for each other, only for the
 * server's reply, so a worker may compute on parameters that other workers have changed since:
 * the <em>staleness</em> of a gradient is the number of updates applied between the version it
 * was computed on and its own application.
 *
 * <h2>The staleness bound ({@code --max-staleness K})</h2>
 * A worker's clock is the number of its gradients the server has applied. The server holds back
 * its reply to a worker whose clock is more than {@code K} ahead of the lowest clock among the
 * workers still training, until the slowest catch up (stale synchronous parallel). So a worker
 * starts step {@code s} only when every unfinished worker has finished step {@code s - K - 1}:
 * {@code K = 0} runs the workers in lock step, a large {@code K} lets them run free. The slowest
 * worker is never held back, so the rule cannot deadlock. A held-back reply waits at most the
 * timeout, then the training fails naming the slowest worker.
 *
 * <h2>Checkpoints</h2>
 * The server owns the parameters, so it alone checkpoints (every {@code --checkpoint-every}
 * rounds of one gradient per worker, and at the end): the parameters, their version, each
 * worker's clock and the loss per round, taken under the lock so they agree with each other.
 * Gradients that workers had computed but the server had not applied are not in it. On resume
 * the server restores all of that and starts each worker at its own clock (the START message),
 * so each step of each worker is applied exactly once over the two runs. Async runs are not
 * reproducible (the order in which gradients arrive decides the result), resumed or not.
 *
 * <h2>Failures</h2>
 * Every receive waits at most {@code config.timeout()}. When a worker fails (its transport
 * closes, it sends nonsense, it times out) the server records the failure naming that worker,
 * sends ABORT to every other worker at its next message or wake-up, and throws a
 * {@link CollectiveException} naming the worker. A worker that gets ABORT throws naming the server.
 */
final class AsyncTraining {
    private static final String OPERATION = "async training";
    /** Checkpoint tensor: each worker's clock (gradients applied), DOUBLE [workers]. */
    private static final String WORKER_CLOCKS = "worker-clocks";
    /** Checkpoint metadata: the parameters' version (gradients applied in all). */
    private static final String VERSION = "version";

    private final TrainSettings settings;
    private final Network network;
    private final Dataset train;
    private final Dataset heldOut;
    private final DistributedConfig config;
    private final Transport transport;
    private final PrintStream out;
    private final Trainer.StepHook hook;
    private final BatchSchedule schedule;
    private final int workers;
    private final long parameterCount;
    private final Duration timeout;
    private final TrainingCheckpoints checkpoints;

    AsyncTraining(TrainSettings settings, Network network, Dataset train, Dataset heldOut, DistributedConfig config,
            Transport transport, PrintStream out, Trainer.StepHook hook, BatchSchedule schedule,
            TrainingCheckpoints checkpoints) {
        this.settings = settings;
        this.network = network;
        this.train = train;
        this.heldOut = heldOut;
        this.config = config;
        this.transport = transport;
        this.out = out;
        this.hook = hook;
        this.schedule = schedule;
        this.workers = config.worldSize() - 1;
        this.parameterCount = network.parameterCount();
        this.timeout = config.timeout();
        this.checkpoints = checkpoints;
    }

    Trainer.Outcome run() {
        return config.rank() == 0 ? new Server().run() : runWorker();
    }

    // ---------------------------------------------------------------- worker

    private Trainer.Outcome runWorker() {
        int rank = config.rank();
        int shard = settings.batchSize() / workers;
        ByteBuffer buffer = AsyncMessage.allocate(parameterCount);
        long start = System.nanoTime();
        INDArray[] params = receiveParams(buffer, -1);
        float[] curve = new float[settings.steps()];
        long commNanos = 0;
        long busyNanos = 0;
        try {
            for (int step = startStep; step < settings.steps(); step++) {
                Trainer.callHook(hook, rank, step);
                long stepStart = System.nanoTime();
                int[] order = schedule.order(step);
                int from = schedule.offset(step) + (rank - 1) * shard;
                INDArray x = train.features(order, from, from + shard);
                INDArray y = train.oneHot(order, from, from + shard);
                Network.LossAndGradients result = network.lossAndGradients(params, x, y);
                TensorMemory.close(x, y);
                curve[step] = (float) result.loss();
                long version = heldVersion;
                AsyncMessage.writeHeader(buffer, AsyncMessage.GRADIENT, version, step, result.loss(), commNanos,
                        busyNanos, Math.toIntExact(4 * parameterCount));
                for (INDArray gradient : result.gradients()) {
                    AsyncMessage.putFloats(buffer, Trainer.flat(gradient));
                }
                TensorMemory.close(result.gradients());
                buffer.flip();
                long commStart = System.nanoTime();
                transport.send(0, buffer);
                INDArray[] fresh = receiveParams(buffer, step);
                long now = System.nanoTime();
                commNanos += now - commStart;
                busyNanos += now - stepStart;
                TensorMemory.close(params);
                params = fresh;
            }
            AsyncMessage.writeHeader(buffer, AsyncMessage.DONE, heldVersion, settings.steps(),
                    curve[curve.length - 1], commNanos, busyNanos, 0);
            buffer.flip();
            transport.send(0, buffer);
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            INDArray x = heldOut.allFeatures();
            double accuracy = network.accuracy(params, x, heldOut.labels());
            TensorMemory.close(x);
            float[][] values = Trainer.toFloats(params);
            TrainSummary summary = new TrainSummary(settings.steps(), curve[curve.length - 1], accuracy,
                    elapsed, Trainer.share(commNanos, busyNanos), curve, heldOut.size(), Algorithm.PS.label(), "async",
                    config.worldSize(), -1, -1, -1, TrainSummary.digest(values), startStep);
            return new Trainer.Outcome(summary, values);
        } finally {
            TensorMemory.close(params);
        }
    }

    /** Worker only: the version of the parameters it holds, as the last PARAMS message said. */
    private long heldVersion;
    /** Worker only: the step to start at, as the START message said. */
    private int startStep;

    /**
     * Waits for the server's PARAMS answering {@code step}, or for {@code step} -1 its START (which
     * sets {@link #startStep}), and makes arrays of the parameters.
     */
    private INDArray[] receiveParams(ByteBuffer buffer, int step) {
        int rank = config.rank();
        buffer.clear();
        int length = transport.recvAtMost(0, buffer, timeout);
        AsyncMessage.Header header = AsyncMessage.read(buffer, length, OPERATION, rank, 0);
        if (header.kind() == AsyncMessage.ABORT) {
            throw new CollectiveException(OPERATION, rank, 0, "the server stopped the training: "
                    + AsyncMessage.reason(buffer, header));
        }
        boolean start = step < 0;
        if (start ? header.kind() != AsyncMessage.START || header.step() < 0 || header.step() > settings.steps()
                : header.kind() != AsyncMessage.PARAMS || header.step() != step) {
            throw new CollectiveException(OPERATION, rank, 0, "expected " + (start ? "the parameters to start from"
                    : "the parameters answering step " + step) + ", got message kind " + header.kind()
                    + " for step " + header.step());
        }
        if (start) {
            startStep = (int) header.step();
        }
        float[] values = AsyncMessage.floats(buffer, header, parameterCount, OPERATION, rank, 0);
        heldVersion = header.version();
        return unflatten(values);
    }

    private INDArray[] unflatten(float[] values) {
        long[][] shapes = network.shapes();
        INDArray[] arrays = new INDArray[shapes.length];
        int offset = 0;
        for (int i = 0; i < shapes.length; i++) {
            int length = (int) (shapes[i][0] * shapes[i][1]);
            float[] part = new float[length];
            System.arraycopy(values, offset, part, 0, length);
            offset += length;
            arrays[i] = Nd4j.create(part, shapes[i], 'c');
        }
        return arrays;
    }

    // ---------------------------------------------------------------- server

    /** Rank 0's side: the parameters, the clocks and the statistics, all guarded by {@link #lock}. */
    private final class Server {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        /** Set by {@link #run} before the serving threads start, then changed in place under the lock. */
        private INDArray[] params;
        private final long[] clock = new long[workers + 1];
        private final boolean[] done = new boolean[workers + 1];
        private final long[] workerComm = new long[workers + 1];
        private final long[] workerBusy = new long[workers + 1];
        private final float[] curve = new float[settings.steps()];
        private final double[] roundLoss = new double[settings.steps()];
        private final int[] heldOutLabels = heldOut.labels();
        private INDArray heldOutX;
        private long version;
        private long maxLead;
        private long maxGradientAge;
        private long heldBack;
        private long windowStart;
        /** The held-out accuracy printed with the last round's progress line, and the version it measured. */
        private double lastRoundAccuracy = Double.NaN;
        private long lastRoundVersion = -1;
        /** The round of the checkpoint resumed from; 0 for a fresh start. */
        private int resumedRound;
        private CollectiveException failure;

        Trainer.Outcome run() {
            long start = System.nanoTime();
            windowStart = start;
            heldOutX = heldOut.allFeatures();
            try {
                restoreOrInit();
                ByteBuffer initial = AsyncMessage.allocate(parameterCount);
                for (int worker = 1; worker <= workers; worker++) {
                    packParams(initial, AsyncMessage.START, clock[worker]);
                    transport.send(worker, initial);
                }
                List<Thread> threads = new ArrayList<>();
                for (int worker = 1; worker <= workers; worker++) {
                    int w = worker;
                    Thread thread = new Thread(() -> serve(w), "ringstar-async-server-for-rank-" + w);
                    thread.setDaemon(true);
                    threads.add(thread);
                    thread.start();
                }
                // Each thread's waits are bounded by the timeout, so each ends; the bound here, a
                // timeout per step, only keeps a bug in that from hanging the server.
                long deadline = System.nanoTime() + timeout.multipliedBy(settings.steps() + 2L).toNanos();
                for (int i = 0; i < threads.size(); i++) {
                    Thread thread = threads.get(i);
                    thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                    if (thread.isAlive()) {
                        throw new CollectiveTimeoutException(OPERATION, 0, i + 1, "the server's thread for worker rank "
                                + (i + 1) + " did not end within " + (settings.steps() + 2) + " timeouts");
                    }
                }
                if (failure != null) {
                    throw failure;
                }
                Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
                // Every gradient has been applied, so the last round's progress line measured these very
                // parameters (no update came after it); evaluate again only if that were not so.
                double accuracy = lastRoundVersion == version ? lastRoundAccuracy
                        : network.accuracy(params, heldOutX, heldOutLabels);
                long comm = 0;
                long busy = 0;
                for (int w = 1; w <= workers; w++) {
                    comm += workerComm[w];
                    busy += workerBusy[w];
                }
                float[][] values = Trainer.toFloats(params);
                TrainSummary summary = new TrainSummary(settings.steps(), curve[curve.length - 1], accuracy,
                        elapsed, Trainer.share(comm, busy), curve, heldOut.size(), Algorithm.PS.label(), "async",
                        config.worldSize(), maxLead, maxGradientAge, heldBack, TrainSummary.digest(values),
                        resumedRound);
                out.println(summary.describe(settings.model().label()));
                return new Trainer.Outcome(summary, values);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException(OPERATION, 0, CollectiveException.NO_RANK,
                        "interrupted while serving the workers", e);
            } finally {
                TensorMemory.close(heldOutX);
                if (params != null) {
                    TensorMemory.close(params);
                }
            }
        }

        /** The parameters, version, clocks and loss per round of the checkpoint resumed from, or a fresh start. */
        private void restoreOrInit() {
            Optional<Checkpoint> point = checkpoints.takeResumePoint(config.worldSize(), network);
            if (point.isEmpty()) {
                params = network.init(settings.seed());
                return;
            }
            Checkpoint checkpoint = point.get();
            resumedRound = (int) checkpoint.step();
            String[] names = network.parameterNames();
            params = new INDArray[names.length];
            for (int i = 0; i < names.length; i++) {
                params[i] = checkpoint.tensor(names[i]);
            }
            INDArray clocks = checkpoint.tensor(WORKER_CLOCKS);
            INDArray soFar = checkpoint.tensor(TrainingCheckpoints.LOSS_CURVE);
            version = Long.parseLong(checkpoint.metadata(VERSION));
            long applied = 0;
            for (int w = 1; w <= workers; w++) {
                clock[w] = (long) clocks.getDouble(w - 1);
                applied += clock[w];
            }
            if (clocks.length() != workers || applied != version || version != checkpoint.step() * workers) {
                throw new IllegalArgumentException("checkpoint of step " + checkpoint.step() + " does not add up: "
                        + "version " + version + ", worker clocks " + clocks + " for " + workers + " workers");
            }
            float[] losses = Trainer.flat(soFar);
            for (int round = 0; round < losses.length; round++) {
                curve[round] = losses[round];
                roundLoss[round] = (double) losses[round] * workers;
            }
            TensorMemory.close(clocks, soFar);
        }

        /** Under the lock, after a whole round: the server's state to the checkpoint directory. */
        private void saveCheckpoint(int rounds) {
            Map<String, INDArray> tensors = network.named(params);
            double[] clocks = new double[workers];
            for (int w = 1; w <= workers; w++) {
                clocks[w - 1] = clock[w];
            }
            INDArray clockArray = Nd4j.create(clocks, new long[] {workers}, DataType.DOUBLE);
            INDArray soFar = Nd4j.create(Arrays.copyOf(curve, rounds), new long[] {rounds}, 'c');
            tensors.put(WORKER_CLOCKS, clockArray);
            tensors.put(TrainingCheckpoints.LOSS_CURVE, soFar);
            try {
                checkpoints.save(rounds, tensors, Map.of(VERSION, Long.toString(version)), config.worldSize());
            } finally {
                TensorMemory.close(clockArray, soFar);
            }
        }

        /** One worker's thread: receive, apply, maybe wait for the slowest, reply; until DONE or a failure. */
        private void serve(int worker) {
            ByteBuffer buffer = AsyncMessage.allocate(parameterCount);
            try {
                while (true) {
                    buffer.clear();
                    int length = transport.recvAtMost(worker, buffer, timeout);
                    AsyncMessage.Header header = AsyncMessage.read(buffer, length, OPERATION, 0, worker);
                    if (failed()) {
                        sendAbort(worker);
                        return;
                    }
                    if (header.kind() == AsyncMessage.DONE) {
                        finish(worker, header);
                        return;
                    }
                    if (header.kind() != AsyncMessage.GRADIENT) {
                        throw new CollectiveException(OPERATION, 0, worker, "expected a gradient, got message kind "
                                + header.kind());
                    }
                    float[] values = AsyncMessage.floats(buffer, header, parameterCount, OPERATION, 0, worker);
                    if (!applyAndAwaitTurn(worker, header, values, buffer)) {
                        sendAbort(worker);
                        return;
                    }
                    transport.send(worker, buffer);
                }
            } catch (CollectiveException e) {
                fail(new CollectiveException(OPERATION, 0, worker, "worker rank " + worker + " failed: "
                        + e.getMessage(), e));
                sendAbort(worker);
            } catch (RuntimeException | Error e) {
                fail(new CollectiveException(OPERATION, 0, worker, "serving worker rank " + worker + " failed: " + e,
                        e));
                sendAbort(worker);
            }
        }

        /**
         * Applies one gradient, then holds the reply back while the staleness bound says so, then
         * writes the reply (current parameters) into {@code buffer}, flipped for sending.
         *
         * @return false if the training failed meanwhile
         */
        private boolean applyAndAwaitTurn(int worker, AsyncMessage.Header header, float[] values, ByteBuffer buffer) {
            INDArray[] gradient = unflatten(values);
            lock.lock();
            try {
                for (int i = 0; i < params.length; i++) {
                    params[i].subi(gradient[i].muli(settings.learningRate()));
                }
                maxGradientAge = Math.max(maxGradientAge, version - header.version());
                version++;
                clock[worker]++;
                workerComm[worker] = header.commNanos();
                workerBusy[worker] = header.busyNanos();
                recordLoss(header.loss());
                changed.signalAll();
                long deadline = System.nanoTime() + timeout.toNanos();
                boolean waited = false;
                while (failure == null && clock[worker] - slowestClock() > settings.maxStaleness()) {
                    waited = true;
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        int slowest = slowestWorker();
                        throw new CollectiveTimeoutException(OPERATION, 0, slowest, "worker rank " + worker
                                + " is " + (clock[worker] - slowestClock()) + " steps ahead of worker rank " + slowest
                                + " (bound " + settings.maxStaleness() + "), which sent nothing for " + timeout);
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
                packParams(buffer, AsyncMessage.PARAMS, header.step());
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException(OPERATION, 0, worker, "interrupted while holding back the reply", e);
            } finally {
                lock.unlock();
                TensorMemory.close(gradient);
            }
        }

        /** Loss bookkeeping and, every {@code logEvery} rounds of one update per worker, a progress line. */
        private void recordLoss(double loss) {
            long applied = version;
            int round = (int) ((applied - 1) / workers);
            if (round >= roundLoss.length) {
                return;
            }
            roundLoss[round] += loss;
            if (applied % workers != 0) {
                return;
            }
            curve[round] = (float) (roundLoss[round] / workers);
            int stepsDone = round + 1;
            if (checkpoints.due(stepsDone)) {
                saveCheckpoint(stepsDone);
            }
            if (stepsDone % settings.logEvery() == 0 || stepsDone == settings.steps()) {
                long now = System.nanoTime();
                int inWindow = (round % settings.logEvery()) + 1;
                long comm = 0;
                long busy = 0;
                for (int w = 1; w <= workers; w++) {
                    comm += workerComm[w];
                    busy += workerBusy[w];
                }
                double accuracy = network.accuracy(params, heldOutX, heldOutLabels);
                if (stepsDone == settings.steps()) {
                    lastRoundAccuracy = accuracy;
                    lastRoundVersion = applied;
                }
                Trainer.printProgress(out, stepsDone, settings.steps(), curve[round], accuracy,
                        (now - windowStart) / 1e6 / inWindow, Trainer.share(comm, busy),
                        String.format(Locale.ROOT, "  version %d", applied));
                windowStart = now;
            }
        }

        private void finish(int worker, AsyncMessage.Header header) {
            lock.lock();
            try {
                if (header.step() != settings.steps() || clock[worker] != settings.steps()) {
                    throw new CollectiveException(OPERATION, 0, worker, "worker rank " + worker + " says it is done "
                            + "after " + header.step() + " steps; the server applied " + clock[worker] + " of "
                            + settings.steps());
                }
                done[worker] = true;
                workerComm[worker] = header.commNanos();
                workerBusy[worker] = header.busyNanos();
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }

        /** Lowest clock among the workers still training (the caller holds the lock). */
        private long slowestClock() {
            long lowest = Long.MAX_VALUE;
            for (int w = 1; w <= workers; w++) {
                if (!done[w]) {
                    lowest = Math.min(lowest, clock[w]);
                }
            }
            return lowest == Long.MAX_VALUE ? 0 : lowest;
        }

        private int slowestWorker() {
            int slowest = 1;
            for (int w = 1; w <= workers; w++) {
                if (!done[w] && (done[slowest] || clock[w] < clock[slowest])) {
                    slowest = w;
                }
            }
            return slowest;
        }

        /**
         * Writes PARAMS or START with the current parameters into {@code buffer}, flipped; the caller
         * holds the lock or runs alone.
         */
        private void packParams(ByteBuffer buffer, byte kind, long step) {
            AsyncMessage.writeHeader(buffer, kind, version, step, Double.NaN, 0, 0,
                    Math.toIntExact(4 * parameterCount));
            for (INDArray param : params) {
                AsyncMessage.putFloats(buffer, Trainer.flat(param));
            }
            buffer.flip();
        }

        private boolean failed() {
            lock.lock();
            try {
                return failure != null;
            } finally {
                lock.unlock();
            }
        }

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

        /** Tells a worker the training failed; best effort, since that worker may be the one gone. */
        private void sendAbort(int worker) {
            String reason;
            lock.lock();
            try {
                reason = failure == null ? "failed" : failure.getMessage();
            } finally {
                lock.unlock();
            }
            try {
                transport.send(worker, AsyncMessage.abort(reason));
            } catch (RuntimeException ignored) {
                // The worker is gone or its link is; the failure is already recorded and thrown by run().
            }
        }
    }
}
