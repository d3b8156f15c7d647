package io.ringstar.internal.engine;

import io.ringstar.Deadline;
import io.ringstar.ReduceOp;
import io.ringstar.internal.protocol.MessageHeader;
import io.ringstar.internal.tensor.TensorLayout;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One call of a collective, as {@link CollectiveEngine#run} takes it: the operation's name, what
 * kind of collective it is and its algorithm, the reduce op and root, the tensors and where the
 * results go, their layout, the deadline, and whether compression may apply. Every collective,
 * the barrier included, is described by one of these and run the same way.
 *
 * <p>Mutable and reused: its owner (a communicator, an aggregator) keeps one and refills it for
 * each call with one of the resetting methods ({@link #inPlace}, {@link #newResults}, {@link #into},
 * {@link #gather},
 * {@link #scatter}, {@link #barrier}) and then the optional settings, so that the steady state
 * allocates no request per call. It is filled and run by the thread that runs the collective, one
 * call at a time; the engine keeps no reference to it after {@link CollectiveEngine#run} returns.
 */
public final class CollectiveRequest {
    /** What a collective does with its tensors, which decides how the engine runs it. */
    public enum Kind {
        /**
         * Results shaped as the sources (possibly the sources themselves): all-reduce, reduce,
         * broadcast. Run group by group and window by window, packed into a bucket when the tensors
         * of a type are not one 'c'-order array, with {@link #algorithm()} on each window.
         */
        IN_LAYOUT,
        /** One tensor in, one new array of every rank's tensor in rank order out. */
        ALL_GATHER,
        /** One tensor in, one new 1-D array of this rank's part of the reduction out. */
        REDUCE_SCATTER,
        /** No tensors: the ranks only meet. */
        BARRIER,
        /**
         * No tensors: the ranks meet through the transport's barrier, which, when its deadline
         * passes, names every rank that did not arrive ({@link io.ringstar.spi.TransportProbe#barrier}).
         */
        MONITORED_BARRIER
    }

    /** Whether and how option compression may apply to a collective's windows. */
    public enum Compressible {
        /** Never: the collective is not a SUM/AVG all-reduce of gradients. */
        NO,
        /** Top-k pairs gathered around a ring, summed on every rank. */
        RING,
        /** Top-k pairs sent to the star's servers, dense sums sent back. */
        STAR
    }

    private String operation;
    private Kind kind;
    private CollectiveEngine.Algorithm algorithm;
    private Compressible compressible;
    private ReduceOp op;
    private int root;
    private TensorLayout layout;
    private INDArray[] sources;
    private INDArray[] results;
    private boolean newResults;
    private boolean writeResults;
    private Deadline deadline;
    private String algorithmName;
    private long issuedSequence;

    /**
     * Describes a call whose results are its tensors, worked on in place, with no op, no root, no
     * compression, and results written on this rank; set those with the methods below.
     */
    public CollectiveRequest inPlace(String name, CollectiveEngine.Algorithm run, TensorLayout tensorLayout,
            INDArray[] tensors, Deadline until) {
        return reset(name, Kind.IN_LAYOUT, run, tensorLayout, until).tensors(tensors, tensors, false);
    }

    /**
     * Describes a call that leaves {@code inputs} alone and puts into {@code outputs} (as long as
     * {@code inputs}, its elements null) new 'c'-order arrays of the inputs' shapes and types, made
     * by the engine inside its failure handling and freed there if the call fails.
     */
    public CollectiveRequest newResults(String name, CollectiveEngine.Algorithm run, TensorLayout tensorLayout,
            INDArray[] inputs, INDArray[] outputs, Deadline until) {
        return reset(name, Kind.IN_LAYOUT, run, tensorLayout, until).tensors(inputs, outputs, true);
    }

    /**
     * Describes a call that reads {@code inputs} and writes into {@code outputs}, arrays the caller
     * owns with the inputs' layout: an output may be its input itself (worked on in place), and the
     * caller has checked that no output overlaps another output or another input. Nothing is made,
     * so nothing is freed when the call fails; the outputs' contents are then undefined.
     */
    public CollectiveRequest into(String name, CollectiveEngine.Algorithm run, TensorLayout tensorLayout,
            INDArray[] inputs, INDArray[] outputs, Deadline until) {
        return reset(name, Kind.IN_LAYOUT, run, tensorLayout, until).tensors(inputs, outputs, false);
    }

    /**
     * Describes an all-gather of {@code input[0]}: {@code output[0]} becomes a new array of shape
     * {@code [worldSize, ...input[0].shape()]}.
     */
    public CollectiveRequest gather(String name, TensorLayout tensorLayout, INDArray[] input, INDArray[] output,
            Deadline until) {
        return reset(name, Kind.ALL_GATHER, null, tensorLayout, until).tensors(input, output, true);
    }

    /**
     * Describes a reduce-scatter of {@code input[0]}, whose length the world size divides:
     * {@code output[0]} becomes a new 1-D array of this rank's part. Set the op with {@link #op}.
     */
    public CollectiveRequest scatter(String name, TensorLayout tensorLayout, INDArray[] input, INDArray[] output,
            Deadline until) {
        return reset(name, Kind.REDUCE_SCATTER, null, tensorLayout, until).tensors(input, output, true);
    }

    /** Describes a barrier: no tensors, no layout. */
    public CollectiveRequest barrier(String name, Deadline until) {
        return reset(name, Kind.BARRIER, null, null, until).tensors(null, null, false).algorithmName("doubling");
    }

    /** Describes a monitored barrier ({@link Kind#MONITORED_BARRIER}): no tensors, no layout. */
    public CollectiveRequest monitoredBarrier(String name, Deadline until) {
        return reset(name, Kind.MONITORED_BARRIER, null, null, until).tensors(null, null, false)
                .algorithmName("transport");
    }

    /**
     * The algorithm's name for the flight recorder and the statistics ({@code ring}, {@code star},
     * ...); by default {@code ring} for the gather and scatter, {@code doubling} for the barrier,
     * and for an {@link Kind#IN_LAYOUT} call whatever the caller names (else {@code unnamed}).
     */
    public CollectiveRequest algorithmName(String name) {
        this.algorithmName = name;
        return this;
    }

    /** The number a non-blocking call got when it was issued ({@link CollectiveEngine#issue}); 0 by default. */
    public CollectiveRequest issued(long sequence) {
        this.issuedSequence = sequence;
        return this;
    }

    /** The reduce op, checked in every header; null (the default) for a collective that reduces nothing. */
    public CollectiveRequest op(ReduceOp reduceOp) {
        this.op = reduceOp;
        return this;
    }

    /** The root rank of a broadcast or reduce; {@link MessageHeader#NO_ROOT} by default. */
    public CollectiveRequest root(int rootRank) {
        this.root = rootRank;
        return this;
    }

    /** How option compression may apply ({@link Compressible#NO} by default). */
    public CollectiveRequest compressible(Compressible how) {
        this.compressible = how;
        return this;
    }

    /** False leaves the results as they are (the ranks of a reduce that are not its root); true by default. */
    public CollectiveRequest writeResults(boolean write) {
        this.writeResults = write;
        return this;
    }

    /** The operation's name, for headers and error messages. */
    public String operation() {
        return operation;
    }

    /** What the collective does with its tensors. */
    public Kind kind() {
        return kind;
    }

    /** The algorithm of each window of an {@link Kind#IN_LAYOUT} call; null for the other kinds. */
    public CollectiveEngine.Algorithm algorithm() {
        return algorithm;
    }

    /** How option compression may apply. */
    public Compressible compressible() {
        return compressible;
    }

    /** The reduce op, or null. */
    public ReduceOp op() {
        return op;
    }

    /** The root rank, or {@link MessageHeader#NO_ROOT}. */
    public int root() {
        return root;
    }

    /** The layout of {@link #sources()}; null for a barrier. */
    public TensorLayout layout() {
        return layout;
    }

    /** The tensors the call reads. */
    public INDArray[] sources() {
        return sources;
    }

    /** Where the results go: the sources themselves, or an array the engine fills with new arrays. */
    public INDArray[] results() {
        return results;
    }

    /** Whether the engine makes the results (see {@link #newResults}). */
    public boolean newResults() {
        return newResults;
    }

    /** Whether this rank's results are written (see {@link #writeResults(boolean)}). */
    public boolean writeResults() {
        return writeResults;
    }

    /** What bounds every wait of the call. */
    public Deadline deadline() {
        return deadline;
    }

    /** The algorithm's name (see {@link #algorithmName(String)}). */
    public String algorithmName() {
        return algorithmName;
    }

    /** The call's number from its issue, or 0 for a call numbered when it starts. */
    public long issuedSequence() {
        return issuedSequence;
    }

    private CollectiveRequest reset(String name, Kind what, CollectiveEngine.Algorithm run, TensorLayout tensorLayout,
            Deadline until) {
        this.operation = name;
        this.kind = what;
        this.algorithm = run;
        this.layout = tensorLayout;
        this.deadline = until;
        this.compressible = Compressible.NO;
        this.op = null;
        this.root = MessageHeader.NO_ROOT;
        this.writeResults = true;
        this.algorithmName = what == Kind.IN_LAYOUT ? "unnamed" : "ring";
        this.issuedSequence = 0;
        return this;
    }

    private CollectiveRequest tensors(INDArray[] from, INDArray[] into, boolean made) {
        this.sources = from;
        this.results = into;
        this.newResults = made;
        return this;
    }
}
