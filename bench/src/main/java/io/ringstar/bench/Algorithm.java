package io.ringstar.bench;

import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.Transport;
import java.util.Arrays;
import java.util.List;

/** The aggregators that the benchmarks compare, by the names the command line uses. */
public enum Algorithm {
    /** {@link ParameterServer}: the star through rank 0. */
    PS("ps"),
    /** {@link AllReduceAggregator}: the ring all-reduce. */
    RING("ring");

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
        };
    }

    /** Off-heap bytes the aggregator holds between calls (its buckets and receive buffer). */
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

    static List<String> labels() {
        return Arrays.stream(values()).map(Algorithm::label).toList();
    }
}
