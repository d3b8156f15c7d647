package io.ringstar.internal.engine;

import io.ringstar.internal.tensor.TensorLayout;
import java.util.Arrays;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Checks the result arrays a caller passes for a collective to write into
 * ({@link io.ringstar.GradientAggregator#reduceGradientsInto}): as many as the inputs, each with its
 * input's shape and data type, and none whose memory overlaps another result's or an input's other
 * than its own (an input that is its own result is worked on in place, which the algorithms
 * support; any other overlap would have the call overwrite what it has still to read, or write two
 * results into one place). A view's memory is taken as the span from its first to its last
 * element, so interleaved strided views count as overlapping: a false alarm the caller can avoid,
 * never a missed overlap.
 *
 * <p>Reused from call to call by one thread: its scratch arrays grow to the largest call and are
 * kept, so that a call of the same tensors allocates nothing here. The overlap check sorts the
 * spans by address with an insertion sort, linear for the usual results laid out in order (views
 * of one flattened gradient), and then sweeps them once.
 */
public final class CallerResults {
    /** Spans: first byte, byte past the last, and who: {@code i} for result i, {@code -1 - j} for input j. */
    private long[] firsts = new long[0];
    private long[] ends = new long[0];
    private int[] owners = new int[0];
    private int count;

    /**
     * Throws {@link IllegalArgumentException} naming {@code operation} and {@code rank} if
     * {@code results} do not fit {@code inputs} (whose {@code layout} the caller has read), or
     * overlap as the class comment says; nothing is sent before.
     */
    public void check(String operation, int rank, TensorLayout layout, INDArray[] inputs, INDArray[] results) {
        String call = operation + " on rank " + rank + ": ";
        if (results == null) {
            throw new IllegalArgumentException(call + "the result array is null");
        }
        if (results.length != inputs.length) {
            throw new IllegalArgumentException(call + "passed " + results.length + " results for " + inputs.length
                    + " gradients; they must pair up one for one");
        }
        if (!layout.matches(results)) {
            throw new IllegalArgumentException(call + unlike(layout, results));
        }
        checkOverlaps(call, inputs, results);
    }

    /** What {@link TensorLayout#matches} found wrong: the first result of another type or shape. */
    private static String unlike(TensorLayout layout, INDArray[] results) {
        for (int i = 0; i < results.length; i++) {
            INDArray result = results[i];
            if (result == null) {
                return "result " + i + " is null";
            }
            long[] want = layout.shape(i);
            if (result.dataType() != layout.type(i).dataType() || !Arrays.equals(result.shape(), want)) {
                return "result " + i + " is " + result.dataType() + Arrays.toString(result.shape()) + " but gradient "
                        + i + " is " + layout.type(i).dataType() + Arrays.toString(want)
                        + "; each result must have its gradient's shape and data type";
            }
        }
        return "the results do not match the gradients' layout " + layout.describe();
    }

    private void checkOverlaps(String call, INDArray[] inputs, INDArray[] results) {
        count = 0;
        ensureCapacity(inputs.length + results.length);
        for (int i = 0; i < results.length; i++) {
            add(results[i], i);
            if (inputs[i] != results[i]) {
                add(inputs[i], -1 - i);
            }
        }
        sortByFirst();
        // The sweep: a span that starts before the furthest end of an earlier result overlaps that
        // result; a result that starts before the furthest end of an earlier input overlaps that input.
        long resultEnd = Long.MIN_VALUE;
        int resultOwner = 0;
        long inputEnd = Long.MIN_VALUE;
        int inputOwner = 0;
        for (int s = 0; s < count; s++) {
            int owner = owners[s];
            boolean isResult = owner >= 0;
            if (firsts[s] < resultEnd) {
                throw overlap(call, owner, resultOwner);
            }
            if (isResult && firsts[s] < inputEnd) {
                throw overlap(call, owner, inputOwner);
            }
            if (isResult && ends[s] > resultEnd) {
                resultEnd = ends[s];
                resultOwner = owner;
            } else if (!isResult && ends[s] > inputEnd) {
                inputEnd = ends[s];
                inputOwner = owner;
            }
        }
    }

    private static IllegalArgumentException overlap(String call, int owner, int other) {
        return new IllegalArgumentException(call + describe(owner) + " and " + describe(other)
                + " share memory; a result may share memory only with its own gradient, by being that very array"
                + " (an in-place average)");
    }

    private static String describe(int owner) {
        return owner >= 0 ? "result " + owner : "gradient " + (-1 - owner);
    }

    /** Adds the span of {@code tensor}'s memory, if it has any. */
    private void add(INDArray tensor, int owner) {
        long length = tensor.length();
        if (length == 0) {
            return;
        }
        long elementBytes = tensor.data().getElementSize();
        long first = tensor.data().address() + tensor.offset() * elementBytes;
        long lastElement = 0;
        for (int dimension = 0; dimension < tensor.rank(); dimension++) {
            lastElement += (tensor.size(dimension) - 1) * Math.abs(tensor.stride(dimension));
        }
        firsts[count] = first;
        ends[count] = first + (lastElement + 1) * elementBytes;
        owners[count] = owner;
        count++;
    }

    private void sortByFirst() {
        for (int s = 1; s < count; s++) {
            long first = firsts[s];
            long end = ends[s];
            int owner = owners[s];
            int t = s - 1;
            while (t >= 0 && firsts[t] > first) {
                firsts[t + 1] = firsts[t];
                ends[t + 1] = ends[t];
                owners[t + 1] = owners[t];
                t--;
            }
            firsts[t + 1] = first;
            ends[t + 1] = end;
            owners[t + 1] = owner;
        }
    }

    private void ensureCapacity(int spans) {
        if (firsts.length < spans) {
            firsts = new long[spans];
            ends = new long[spans];
            owners = new int[spans];
        }
    }
}
