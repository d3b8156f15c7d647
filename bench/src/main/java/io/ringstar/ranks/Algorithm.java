package io.ringstar.ranks;

import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.Transport;
import java.util.Arrays;
import java.util.List;

/**
 * The aggregators that the benchmarks compare, by the names the command line uses, and (bench
 * only) the {@link io.ringstar.Communicator}, which is no aggregator.
 */
public enum Algorithm {
    /** {@link ParameterServer}: the star through rank 0. */
    PS("ps"),
    /** {@link AllReduceAggregator}: the ring all-reduce. */
    RING("ring"),
    /** {@link io.ringstar.Communicator}'s collectives (bench only; its all-reduce picks its own algorithm). */
    COMM("comm");

    /** The flag that picks the algorithms, shared by {@code bench} and {@code train}. */
    public static final String FLAG = "--algorithm";
    /** The flag's value that picks both aggregators, ps then ring. */
    public static final String BOTH = "both";

    private final String label;

    Algorithm(String label) {
        this.label = label;
    }

    /** The name on the command line and in the tables. */
    public String label() {
        return label;
    }

    /** This algorithm's aggregator for one rank; it owns {@code transport} from now on. */
    public GradientAggregator create(DistributedConfig config, Transport transport) {
        return switch (this) {
            case PS -> new ParameterServer(config, transport);
            case RING -> new AllReduceAggregator(config, transport);
            case COMM -> throw new IllegalStateException("the communicator is not a GradientAggregator");
        };
    }

    /** Off-heap bytes the aggregator holds between calls (its buckets). */
    public static long bufferBytes(GradientAggregator aggregator) {
        if (aggregator instanceof ParameterServer server) {
            return server.bufferBytes();
        }
        if (aggregator instanceof AllReduceAggregator ring) {
            return ring.bufferBytes();
        }
        throw new IllegalArgumentException("no buffer accounting for " + aggregator.getClass().getName());
    }

    /** The algorithm with this label. */
    public static Algorithm of(String label) {
        for (Algorithm algorithm : values()) {
            if (algorithm.label.equals(label)) {
                return algorithm;
            }
        }
        throw new IllegalArgumentException("unknown algorithm '" + label + "'; known: " + labels());
    }

    /** The labels of every algorithm, in declaration order. */
    public static List<String> labels() {
        return Arrays.stream(values()).map(Algorithm::label).toList();
    }
}
