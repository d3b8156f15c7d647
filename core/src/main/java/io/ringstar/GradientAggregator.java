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
 *       data types; the caller owns them. ({@link #reduceGradientsInto} writes into arrays the caller
 *       passes instead, which may be the inputs themselves.)</li>
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

    /**
     * Averages gradients across ranks and writes the averages into {@code results}, which the caller
     * owns and passes: the same count, shapes and data types as {@code gradients}; {@code results[i]}
     * may be {@code gradients[i]} itself, for an in-place average. {@code gradients} are not
     * modified unless they are also the results. The averages have the same bits as
     * {@link #reduceGradients}' on every rank, and ranks may mix the two methods call by call.
     *
     * <p>The training loop's form of {@link #reduceGradients}: it makes no result arrays, so a step
     * allocates nothing that grows with the gradients. When the results of one data type are one
     * 'c'-order array (the usual case: a network's flattened gradient), the average is reduced where
     * it lies; otherwise the tensors go through the aggregator's bucket as for
     * {@link #reduceGradients}. Blocks until done on this rank, at most the configured timeout, and
     * fails as {@link #reduceGradients} does, naming the operation {@code reduceGradientsInto}. After
     * a failure the results' contents are undefined (the gradients that are not results are intact).
     *
     * @throws IllegalArgumentException before anything is sent, naming this rank and the operation, if
     *     the arrays are null, differ in count, shape or data type, or a result's memory overlaps
     *     that of another result or of a gradient other than its own (views are compared by the span
     *     of memory from their first to their last element, so interleaved strided views count as
     *     overlapping); or if {@link #reduceGradients} would refuse the gradients
     */
    void reduceGradientsInto(INDArray[] gradients, INDArray[] results);

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
