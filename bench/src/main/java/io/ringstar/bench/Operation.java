package io.ringstar.bench;

import io.ringstar.Communicator;
import io.ringstar.GradientAggregator;
import io.ringstar.ReduceOp;
import java.util.Arrays;
import java.util.List;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The collectives the bench times: the three of {@link GradientAggregator} (algorithms ps and ring)
 * and the five of {@link Communicator} (algorithm comm). Two labels appear twice, one per family:
 * {@code reduce} is reduceGradients (an average on every rank) for an aggregator and a reduce to
 * rank 0 for the communicator; {@code broadcast} is rank 0's values everywhere for both.
 */
public enum Operation {
    /** {@link GradientAggregator#reduceGradients}: all-reduce (average) semantics, new result arrays. */
    REDUCE("reduce", false),
    /**
     * {@link GradientAggregator#reduceGradientsInto}: the same average, written into a result array
     * the bench makes once per row and passes to every call (the training loop's form).
     */
    REDUCE_INTO("reduceinto", false),
    /** {@link GradientAggregator#broadcastParams}: rank 0's values everywhere. */
    BROADCAST("broadcast", false),
    /** {@link Communicator#allReduce} with AVG, in place. */
    ALL_REDUCE("allreduce", true),
    /** {@link Communicator#allGather}: every rank's tensor, in rank order, on every rank. */
    ALL_GATHER("allgather", true),
    /** {@link Communicator#reduceScatter} with AVG: this rank's share of the average. */
    REDUCE_SCATTER("reducescatter", true),
    /** {@link Communicator#broadcast} from rank 0, in place. */
    COMM_BROADCAST("broadcast", true),
    /** {@link Communicator#reduce} to rank 0 with AVG, in place on rank 0. */
    COMM_REDUCE("reduce", true);

    /** The rank that the communicator's broadcast and reduce have as their root. */
    static final int ROOT = 0;

    private final String label;
    private final boolean communicator;

    Operation(String label, boolean communicator) {
        this.label = label;
        this.communicator = communicator;
    }

    public String label() {
        return label;
    }

    /** Whether this is a call of {@link Communicator} (algorithm comm) rather than of an aggregator. */
    public boolean communicator() {
        return communicator;
    }

    /** The operations of one family (aggregators or communicator) in declaration order. */
    public static List<Operation> of(boolean communicator) {
        return Arrays.stream(values()).filter(operation -> operation.communicator == communicator).toList();
    }

    /** The operation of one family with this label. */
    public static Operation of(boolean communicator, String label) {
        return of(communicator).stream().filter(operation -> operation.label.equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no operation '" + label + "'"));
    }

    /**
     * One call on {@code aggregator}: its results, new arrays owned by the caller, or for
     * {@link #REDUCE_INTO} {@code result} itself, written in place ({@link #allocates} tells which).
     *
     * @param result where {@link #REDUCE_INTO} writes, with {@code tensor}'s shape and type; ignored otherwise
     */
    INDArray[] call(GradientAggregator aggregator, INDArray tensor, INDArray result) {
        return switch (this) {
            case REDUCE -> aggregator.reduceGradients(tensor);
            case REDUCE_INTO -> {
                INDArray[] results = {result};
                aggregator.reduceGradientsInto(new INDArray[] {tensor}, results);
                yield results;
            }
            case BROADCAST -> aggregator.broadcastParams(tensor);
            default -> throw new IllegalStateException(label + " is a communicator operation");
        };
    }

    /** Whether this operation of an aggregator writes into a result array the caller passes. */
    boolean needsResult() {
        return this == REDUCE_INTO;
    }

    /**
     * One call on {@code communicator}: the result, which is {@code input} itself for the in-place
     * calls and a new array, owned by the caller, for all-gather and reduce-scatter ({@link #allocates}).
     */
    INDArray call(Communicator communicator, INDArray input) {
        switch (this) {
            case ALL_REDUCE -> communicator.allReduce(ReduceOp.AVG, input);
            case ALL_GATHER -> {
                return communicator.allGather(input);
            }
            case REDUCE_SCATTER -> {
                return communicator.reduceScatter(ReduceOp.AVG, input);
            }
            case COMM_BROADCAST -> communicator.broadcast(ROOT, input);
            case COMM_REDUCE -> communicator.reduce(ROOT, ReduceOp.AVG, input);
            default -> throw new IllegalStateException(label + " is an aggregator operation");
        }
        return input;
    }

    /**
     * Whether a call returns new arrays, which the caller closes, rather than its input
     * ({@link #call(Communicator, INDArray)}) or the result it was given ({@link #REDUCE_INTO}).
     */
    boolean allocates() {
        return this == ALL_GATHER || this == REDUCE_SCATTER || this == REDUCE || this == BROADCAST;
    }

    /**
     * Elements of each rank's input for a row of about {@code elements} elements, counted as
     * nccl-tests counts the size: the gathered result of all-gather ({@code elements / n} per rank),
     * the input of reduce-scatter (rounded down to a multiple of n), the tensor otherwise. 0 when
     * the size holds less than one element per rank.
     */
    long inputElements(long elements, int worldSize) {
        return switch (this) {
            case ALL_GATHER -> elements / worldSize;
            case REDUCE_SCATTER -> elements / worldSize * worldSize;
            default -> elements;
        };
    }

    /** The row's size in elements for a given input: the gathered buffer for all-gather, else the input. */
    long rowElements(long inputElements, int worldSize) {
        return this == ALL_GATHER ? inputElements * worldSize : inputElements;
    }

    /**
     * The factor from algorithm bandwidth to bus bandwidth, as nccl-tests defines it: the share of
     * the data that must cross the busiest link of an optimal algorithm, so that numbers measured
     * at different world sizes compare. {@code 2(n-1)/n} for all-reduce (and reduceGradients),
     * {@code (n-1)/n} for all-gather and reduce-scatter, 1 for broadcast and reduce to a root.
     */
    public double busBandwidthFactor(int worldSize) {
        return switch (this) {
            case REDUCE, REDUCE_INTO, ALL_REDUCE -> 2.0 * (worldSize - 1) / worldSize;
            case ALL_GATHER, REDUCE_SCATTER -> (worldSize - 1) / (double) worldSize;
            case BROADCAST, COMM_BROADCAST, COMM_REDUCE -> 1.0;
        };
    }
}
