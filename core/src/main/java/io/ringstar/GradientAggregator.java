package io.ringstar;

import io.ringstar.observe.CollectiveListener;
import io.ringstar.observe.CollectiveStatistics;
import java.nio.file.Path;
import java.util.List;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Averages gradients and distributes parameters across the ranks of a data-parallel job. Every
 * rank calls the same methods in the same order with tensors of the same count, shapes and data
 * types.
 *
 * <p>For every implementation:
 * <ul>
 *   <li>Inputs are never modified. Results are new arrays in 'c' order with the inputs' shapes and
 *       data types; the caller owns them.</li>
 *   <li>FLOAT and DOUBLE tensors are supported, mixed freely in one call; any rank (scalars and
 *       empty arrays included), either order, and views. Other data types are rejected with
 *       {@link IllegalArgumentException} before anything is sent.</li>
 *   <li>Results are bit-identical on every rank.</li>
 *   <li>Each call blocks until it is complete on this rank, and at most for the configured
 *       timeout; then it throws a {@link CollectiveException} that names the operation, this rank
 *       and the peer. Ranks that disagree on the operation or on the tensors all get
 *       {@link CollectiveMismatchException}.</li>
 *   <li>After a failure every later call fails at once with an exception of the same type whose
 *       cause is the first failure. Close the aggregator and start a new group to go on.</li>
 *   <li>Not thread-safe: one thread calls an aggregator at a time.</li>
 * </ul>
 */
public interface GradientAggregator extends AutoCloseable {

    /**
     * Returns rank 0's {@code params} on every rank: at start-up, so that all ranks begin from the
     * same parameters, or after restoring a checkpoint.
     */
    INDArray[] broadcastParams(INDArray... params);

    /** Returns the element-wise average of {@code grads} over all ranks, on every rank. */
    INDArray[] reduceGradients(INDArray... grads);

    /** This rank, in {@code [0, worldSize())}. */
    int rank();

    /** Number of ranks in the group. */
    int worldSize();

    /**
     * Per operation, this rank's completed calls so far: calls, bytes, median and 99th percentile
     * time, time waiting for peers. A snapshot; any thread. By default none (an aggregator that
     * does not observe its calls).
     */
    default CollectiveStatistics collectiveStatistics() {
        return new CollectiveStatistics(rank(), List.of());
    }

    /**
     * Writes this rank's flight recorder (its last {@code traceEntries} calls) into {@code dir},
     * made if missing, as one JSON file that {@code ringstar report hang} reads, and returns its
     * path; any thread, any time.
     *
     * @throws java.io.UncheckedIOException if the file cannot be written
     * @throws UnsupportedOperationException if this aggregator keeps no flight recorder (the default)
     */
    default Path dumpTrace(Path dir) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " keeps no flight recorder");
    }

    /**
     * Adds a listener that hears every call issued, started, completed or failed, on the thread
     * that makes it (see {@link CollectiveListener}).
     *
     * @throws UnsupportedOperationException if this aggregator does not observe its calls (the default)
     */
    default void addListener(CollectiveListener listener) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not observe its calls");
    }

    /** Releases the transport and buffers the aggregator owns. Idempotent. */
    @Override
    void close();
}
