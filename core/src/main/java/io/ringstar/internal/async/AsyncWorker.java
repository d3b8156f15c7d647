package io.ringstar.internal.async;

import io.ringstar.AsyncStatistics;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.ParameterSnapshot;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Supplier;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One worker rank of the asynchronous parameter server: sends each server its range of every
 * gradient and takes each server's range of the parameters back, on the calling thread. Messages
 * as in {@link AsyncMessages}. Not thread-safe: one thread calls it.
 */
public final class AsyncWorker {
    private enum State { NEW, STARTED, FINISHED }

    private final Transport transport;
    private final int rank;
    private final int servers;
    private final long[][] shapes;
    private final long total;
    private final ParameterPartition partition;
    private final Duration timeout;
    private final String operation;
    private final ByteBuffer header = AsyncMessages.allocate(AsyncMessages.HEADER_BYTES);
    private final ByteBuffer gradient;
    private final ByteBuffer[] in;
    private final float[] parameters;
    private final long[] versions;
    private final AsyncStatistics[] reported;
    private long step;
    private State state = State.NEW;
    private CollectiveException failure;

    /**
     * @param transport the group's transport, this rank a worker ({@code rank >= servers})
     * @param servers ranks {@code 0 … servers-1} serve
     * @param shapes the parameter tensors' shapes, in order
     */
    public AsyncWorker(Transport transport, int servers, long[][] shapes, String operation) {
        this.transport = transport;
        this.rank = transport.rank();
        this.servers = servers;
        this.shapes = shapes.clone();
        this.total = Arrays.stream(shapes).mapToLong(AsyncWorker::elements).sum();
        this.partition = new ParameterPartition(total, servers);
        this.timeout = transport.timeout();
        this.operation = operation;
        this.gradient = AsyncMessages.allocate(4 * total);
        this.parameters = new float[Math.toIntExact(total)];
        this.in = new ByteBuffer[servers];
        for (int s = 0; s < servers; s++) {
            in[s] = AsyncMessages.receiveBuffer(partition.length(s));
        }
        this.versions = new long[servers];
        this.reported = new AsyncStatistics[servers];
    }

    /** The elements of a tensor of {@code shape}. */
    public static long elements(long[] shape) {
        long count = 1;
        for (long dimension : shape) {
            count = Math.multiplyExact(count, dimension);
        }
        return count;
    }

    /** The first call takes every server's START; later ones ask each server for its range. */
    public ParameterSnapshot pull() {
        return guarded("pull", () -> {
            if (state == State.FINISHED) {
                throw new IllegalStateException(operation + " on rank " + rank + ": pull after finish");
            }
            if (state == State.NEW) {
                long start = Long.MAX_VALUE;
                for (int s = 0; s < servers; s++) {
                    start = Math.min(start, receive(s, AsyncMessages.START, -1, timeout).step());
                }
                step = start;
                state = State.STARTED;
            } else {
                for (int s = 0; s < servers; s++) {
                    AsyncMessages.Header.of(AsyncMessages.PULL, servers, versions[s], step, total,
                            partition.offset(s), 0).writeTo(header);
                    transport.send(s, header);
                }
                for (int s = 0; s < servers; s++) {
                    receive(s, AsyncMessages.PARAMS, step, timeout);
                }
            }
            return snapshot();
        });
    }

    /** Sends each server its range of {@code gradients}, then takes each one's reply. */
    public ParameterSnapshot push(INDArray... gradients) {
        if (state != State.STARTED) {
            throw new IllegalStateException(operation + " on rank " + rank + ": push "
                    + (state == State.NEW ? "before the first pull" : "after finish"));
        }
        flatten(gradients);
        return guarded("push", () -> {
            for (int s = 0; s < servers; s++) {
                long from = partition.offset(s);
                int length = partition.length(s);
                AsyncMessages.Header.of(AsyncMessages.PUSH, servers, versions[s], step, total, from, 4 * length)
                        .writeTo(header);
                ByteBuffer part = gradient.duplicate().position(Math.toIntExact(4 * from))
                        .limit(Math.toIntExact(4 * (from + length)));
                transport.send(s, header, part);
            }
            // A server holds its reply back for at most the timeout (the staleness bound), then answers or fails.
            for (int s = 0; s < servers; s++) {
                receive(s, AsyncMessages.PARAMS, step, timeout.multipliedBy(2));
            }
            step++;
            return snapshot();
        });
    }

    /** Tells every server this worker is done, then waits for the final parameters. */
    public ParameterSnapshot finish() {
        if (state != State.STARTED) {
            throw new IllegalStateException(operation + " on rank " + rank + ": finish "
                    + (state == State.NEW ? "before the first pull" : "twice"));
        }
        return guarded("finish", () -> {
            for (int s = 0; s < servers; s++) {
                AsyncMessages.Header.of(AsyncMessages.FINISH, servers, versions[s], step, total, partition.offset(s),
                        0).writeTo(header);
                transport.send(s, header);
            }
            // A server sends WAITING whenever the others move and fails after a timeout in which none did, so its
            // next message comes within the timeout; twice that is the margin, as for a push.
            for (int s = 0; s < servers; s++) {
                receive(s, AsyncMessages.FINAL, step, timeout.multipliedBy(2));
            }
            state = State.FINISHED;
            return snapshot();
        });
    }

    /** The largest counts the servers reported with their latest replies; version the least of theirs. */
    public AsyncStatistics statistics() {
        long version = Long.MAX_VALUE;
        long lead = 0;
        long held = 0;
        long age = 0;
        for (int s = 0; s < servers; s++) {
            AsyncStatistics counts = reported[s];
            version = Math.min(version, counts == null ? 0 : counts.version());
            if (counts != null) {
                lead = Math.max(lead, counts.maxLead());
                held = Math.max(held, counts.heldBack());
                age = Math.max(age, counts.maxGradientAge());
            }
        }
        return new AsyncStatistics(version, lead, held, age);
    }

    /** Tells the servers, best effort, that this worker stops before finishing; nothing if it finished or failed. */
    public void abandon() {
        if (state == State.STARTED && failure == null) {
            failure = new PeerFailureException(operation, rank, rank, "closed before finish");
            abortServers(failure, "worker rank " + rank + " was closed before it finished");
        }
    }

    private AsyncMessages.Header receive(int server, byte expected, long expectedStep, Duration wait) {
        while (true) {
            ByteBuffer buffer = in[server];
            buffer.clear();
            int length = transport.recvAtMost(server, buffer, wait);
            AsyncMessages.Header message = AsyncMessages.read(buffer, length, servers, operation, rank, server);
            if (message.kind() == AsyncMessages.ABORT) {
                throw AsyncFailures.told(message, buffer, operation, rank, server, "server");
            }
            if (message.kind() == AsyncMessages.WAITING && expected == AsyncMessages.FINAL) {
                continue;
            }
            if (message.kind() != expected || (expectedStep >= 0 && message.step() != expectedStep)) {
                throw new CollectiveMismatchException(operation, rank, server, "expected "
                        + AsyncMessages.name(expected) + (expectedStep >= 0 ? " for step " + expectedStep : "")
                        + " from server rank " + server + ", got " + AsyncMessages.name(message.kind()) + " for step "
                        + message.step());
            }
            AsyncMessages.checkPart(message, total, partition.offset(server), partition.length(server), operation,
                    rank, server);
            AsyncMessages.getFloats(buffer, message, parameters, Math.toIntExact(partition.offset(server)));
            versions[server] = message.version();
            reported[server] = new AsyncStatistics(message.version(), message.maxLead(), message.heldBack(),
                    message.maxGradientAge());
            return message;
        }
    }

    /** Writes the gradients, checked against the shapes, into the gradient buffer as FLOAT values. */
    private void flatten(INDArray[] gradients) {
        if (gradients.length != shapes.length) {
            throw new IllegalArgumentException(operation + " on rank " + rank + ": " + gradients.length
                    + " gradient tensors, the parameters have " + shapes.length);
        }
        gradient.clear();
        for (int i = 0; i < gradients.length; i++) {
            INDArray tensor = gradients[i];
            if (tensor.dataType() != DataType.FLOAT || !Arrays.equals(tensor.shape(), shapes[i])) {
                throw new IllegalArgumentException(operation + " on rank " + rank + ": gradient " + i + " is "
                        + tensor.dataType() + " " + Arrays.toString(tensor.shape()) + ", its parameter FLOAT "
                        + Arrays.toString(shapes[i]));
            }
            int bytes = Math.toIntExact(4 * tensor.length());
            if (bytes == 0) {
                continue;
            }
            INDArray linear = TensorMemory.linearInCOrder(tensor);
            try {
                // The tensor's memory in native order: little-endian, the wire's, on every ND4J platform.
                gradient.put(TensorMemory.bytes(linear, 0, bytes));
            } finally {
                TensorMemory.closeIfCopy(tensor, linear);
            }
        }
        gradient.flip();
    }

    private ParameterSnapshot snapshot() {
        INDArray[] arrays = new INDArray[shapes.length];
        int at = 0;
        for (int i = 0; i < shapes.length; i++) {
            int length = Math.toIntExact(elements(shapes[i]));
            // Straight from the parameters into the new array's memory: no heap copy in between.
            arrays[i] = TensorMemory.newDetached(ElementType.FLOAT, shapes[i]);
            if (length > 0) {
                TensorMemory.bytes(arrays[i], 0, Float.BYTES * length).order(ByteOrder.nativeOrder()).asFloatBuffer()
                        .put(parameters, at, length);
            }
            at += length;
        }
        long version = Arrays.stream(versions).min().orElse(0);
        return new ParameterSnapshot(version, step, arrays);
    }

    /** Runs a call; a failure is kept, told to the servers, and thrown again by every later call. */
    private ParameterSnapshot guarded(String call, Supplier<ParameterSnapshot> body) {
        if (failure != null) {
            throw AsyncFailures.about(failure, operation, rank, failure.peerRank(), call + " after an earlier "
                    + "failure: " + failure.getMessage());
        }
        try {
            return body.get();
        } catch (CollectiveException e) {
            // A server that fails tells its workers, then its process ends: a send to it may fail before the
            // reason is read.
            CollectiveException told = e instanceof PeerFailureException && e.peerRank() >= 0 && e.peerRank() < servers
                    ? AsyncFailures.queuedAbort(transport, e.peerRank(), in[e.peerRank()], servers, operation, "server")
                    : null;
            CollectiveException cause = told != null ? told : e;
            failure = AsyncFailures.about(cause, operation, rank, cause.peerRank(), call + ": " + cause.getMessage());
            abortServers(failure, "worker rank " + rank + " failed: " + e.getMessage());
            throw failure;
        }
    }

    /** Tells every server, best effort, except one that is gone. */
    private void abortServers(CollectiveException cause, String reason) {
        int about = cause.peerRank() == CollectiveException.NO_RANK ? rank : cause.peerRank();
        for (int s = 0; s < servers; s++) {
            if (s == about && cause instanceof PeerFailureException) {
                continue;
            }
            try {
                transport.send(s, AsyncMessages.abort(servers, about, AsyncFailures.code(cause), reason));
            } catch (RuntimeException ignored) {
                // That server or its link is gone too; it fails on its own.
            }
        }
    }
}
