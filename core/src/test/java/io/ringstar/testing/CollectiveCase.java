package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveHandle;
import io.ringstar.Communicator;
import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One closed-form case of the communicator suite: a call with its op and root, and the tensors
 * every rank passes. {@link #runOnRank} makes the rank's tensors, calls, and checks every result
 * bit for bit against {@link CollectiveClosedForm}, together with what must not change (the
 * inputs of a reduce on the other ranks, of all-gather and of reduce-scatter, a broadcast root's
 * tensors, the memory around a view); it returns the results' elements so that the ranks can be
 * compared with each other.
 *
 * <p>All-gather and reduce-scatter take one tensor: they are called once per tensor, in order.
 */
record CollectiveCase(Call call, ReduceOp op, int root, int worldSize, RankTensors.Spec... specs) {
    /** The calls of {@link Communicator} that have a closed form. */
    enum Call {
        ALL_REDUCE, ALL_REDUCE_ASYNC, BROADCAST, BROADCAST_ASYNC, REDUCE, ALL_GATHER, REDUCE_SCATTER;

        boolean reduces() {
            return this == ALL_REDUCE || this == ALL_REDUCE_ASYNC || this == REDUCE || this == REDUCE_SCATTER;
        }

        boolean rooted() {
            return this == BROADCAST || this == BROADCAST_ASYNC || this == REDUCE;
        }
    }

    /** The call's tensors of {@code type} for {@code count}: a vector of count elements and every awkward layout. */
    static RankTensors.Spec[] layouts(ElementType type, long count) {
        return new RankTensors.Spec[] {
            new RankTensors.Spec(type, RankTensors.Kind.C, count),
            new RankTensors.Spec(type, RankTensors.Kind.F, 2, 3),
            new RankTensors.Spec(type, RankTensors.Kind.C),
            new RankTensors.Spec(type, RankTensors.Kind.COLUMN, 5),
            new RankTensors.Spec(type, RankTensors.Kind.C, 0, 3),
            new RankTensors.Spec(type, RankTensors.Kind.TRANSPOSED, 3, 4),
        };
    }

    /** Reduce-scatter inputs of {@code type}: {@code worldSize · count} elements as a vector, 'f' order, transposed. */
    static RankTensors.Spec[] scatterLayouts(ElementType type, int worldSize, long count) {
        if (count == 0) {
            return new RankTensors.Spec[] {new RankTensors.Spec(type, RankTensors.Kind.C, 0)};
        }
        return new RankTensors.Spec[] {
            new RankTensors.Spec(type, RankTensors.Kind.C, worldSize * count),
            new RankTensors.Spec(type, RankTensors.Kind.F, worldSize, count),
            new RankTensors.Spec(type, RankTensors.Kind.TRANSPOSED, worldSize, count),
        };
    }

    @Override
    public String toString() {
        StringBuilder name = new StringBuilder(call.toString());
        if (op != null) {
            name.append(' ').append(op);
        }
        if (call.rooted()) {
            name.append(" root=").append(root);
        }
        return name.append(" n=").append(worldSize).append(' ').append(Arrays.toString(specs)).toString();
    }

    /** Runs the case on {@code rank}; returns the elements of its results (or kept inputs), by tensor. */
    double[][] runOnRank(int rank, Communicator communicator) {
        try (RankTensors mine = tensorsOf(rank)) {
            if (call == Call.ALL_GATHER) {
                return gathered(rank, communicator, mine, this + " on rank " + rank);
            }
            if (call == Call.REDUCE_SCATTER) {
                return scattered(rank, communicator, mine, this + " on rank " + rank);
            }
            CollectiveHandle handle = start(communicator, mine.tensors);
            if (handle != null) {
                handle.await();
                assertTrue(handle.isDone(), "a handle is done once await returned");
            }
            return checkInPlace(rank, mine);
        }
    }

    /** Rank {@code rank}'s tensors for this case; the caller closes them. */
    RankTensors tensorsOf(int rank) {
        return new RankTensors(call.reduces() ? op : null, worldSize, rank, specs);
    }

    /**
     * Issues this case's in-place call over {@code tensors}: the handle of a non-blocking one, or
     * null once a blocking one has returned.
     */
    CollectiveHandle start(Communicator communicator, INDArray[] tensors) {
        switch (call) {
            case ALL_REDUCE:
                communicator.allReduce(op, tensors);
                return null;
            case ALL_REDUCE_ASYNC:
                return communicator.allReduceAsync(op, tensors);
            case BROADCAST:
                communicator.broadcast(root, tensors);
                return null;
            case BROADCAST_ASYNC:
                return communicator.broadcastAsync(root, tensors);
            case REDUCE:
                communicator.reduce(root, op, tensors);
                return null;
            default:
                throw new IllegalArgumentException(call + " is not in place");
        }
    }

    /** Checks what an in-place call left in {@code mine} on {@code rank}; returns the elements by tensor. */
    double[][] checkInPlace(int rank, RankTensors mine) {
        String what = this + " on rank " + rank;
        mine.checkAroundViews(what);
        double[][] results = new double[specs.length][];
        for (int t = 0; t < specs.length; t++) {
            results[t] = CollectiveClosedForm.check(what + " tensor " + t, mine.tensors[t], specs[t].type(),
                    specs[t].shape(), inPlaceResult(rank, t));
        }
        return results;
    }

    /** What tensor {@code t} holds on {@code rank} after an in-place call. */
    private CollectiveClosedForm.Element inPlaceResult(int rank, int t) {
        ElementType type = specs[t].type();
        switch (call) {
            case BROADCAST:
            case BROADCAST_ASYNC:
                return i -> CollectiveClosedForm.value(null, type, worldSize, root, t, i);
            case REDUCE:
                if (rank != root) {
                    return i -> CollectiveClosedForm.value(op, type, worldSize, rank, t, i);
                }
                return i -> CollectiveClosedForm.expected(op, type, worldSize, t, i);
            default:
                return i -> CollectiveClosedForm.expected(op, type, worldSize, t, i);
        }
    }

    private double[][] gathered(int rank, Communicator communicator, RankTensors mine, String what) {
        List<double[]> results = new ArrayList<>();
        for (int t = 0; t < specs.length; t++) {
            int tensor = t;
            ElementType type = specs[t].type();
            long length = specs[t].length();
            long[] shape = new long[specs[t].shape().length + 1];
            shape[0] = worldSize;
            System.arraycopy(specs[t].shape(), 0, shape, 1, specs[t].shape().length);
            INDArray result = communicator.allGather(mine.tensors[t]);
            try {
                results.add(CollectiveClosedForm.check(what + " result " + t, result, type, shape,
                        i -> CollectiveClosedForm.value(null, type, worldSize, (int) (i / length), tensor,
                                i % length)));
            } finally {
                TensorMemory.close(result);
            }
            CollectiveClosedForm.check(what + " input " + t + " (only read)", mine.tensors[t], type,
                    specs[t].shape(), i -> CollectiveClosedForm.value(null, type, worldSize, rank, tensor, i));
        }
        mine.checkAroundViews(what);
        return results.toArray(new double[0][]);
    }

    private double[][] scattered(int rank, Communicator communicator, RankTensors mine, String what) {
        List<double[]> results = new ArrayList<>();
        for (int t = 0; t < specs.length; t++) {
            int tensor = t;
            ElementType type = specs[t].type();
            long part = specs[t].length() / worldSize;
            INDArray result = communicator.reduceScatter(op, mine.tensors[t]);
            try {
                results.add(CollectiveClosedForm.check(what + " result " + t, result, type, new long[] {part},
                        i -> CollectiveClosedForm.expected(op, type, worldSize, tensor, rank * part + i)));
            } finally {
                TensorMemory.close(result);
            }
            CollectiveClosedForm.check(what + " input " + t + " (only read)", mine.tensors[t], type,
                    specs[t].shape(), i -> CollectiveClosedForm.value(op, type, worldSize, rank, tensor, i));
        }
        mine.checkAroundViews(what);
        return results.toArray(new double[0][]);
    }

    /**
     * The results every rank must agree on bit for bit: all of them, except a reduce's, where only
     * the root holds the reduction (the others keep their own inputs, checked in {@link #runOnRank}),
     * and reduce-scatter's, where each rank holds its own part.
     */
    boolean resultsAgree() {
        return call != Call.REDUCE && call != Call.REDUCE_SCATTER;
    }
}
