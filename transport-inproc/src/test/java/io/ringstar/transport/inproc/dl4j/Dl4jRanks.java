package io.ringstar.transport.inproc.dl4j;

import io.ringstar.AllReduceAggregator;
import io.ringstar.AsyncParameterServer;
import io.ringstar.AsyncSettings;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.Transport;
import io.ringstar.testing.Ranks;
import io.ringstar.transport.inproc.InProcessTransport;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Runs one body per rank, each on its own thread, over a fresh in-process group, each rank with
 * its own aggregator (the star or the ring) or asynchronous parameter server, which owns the rank's
 * transport and is closed when the body ends.
 */
final class Dl4jRanks {
    /** The watchdog of every group: no test's ranks take more than this. */
    static final Duration WATCHDOG = Duration.ofSeconds(50);

    private Dl4jRanks() {
    }

    /** The two synchronous topologies. */
    enum Algorithm {
        STAR, RING;

        GradientAggregator create(DistributedConfig config, Transport transport) {
            return this == STAR ? new ParameterServer(config, transport) : new AllReduceAggregator(config, transport);
        }
    }

    /** One rank's code, given its aggregator. */
    @FunctionalInterface
    interface Body<T> {
        T run(int rank, GradientAggregator aggregator) throws Exception;
    }

    /** One rank's code, given its asynchronous parameter server. */
    @FunctionalInterface
    interface AsyncBody<T> {
        T run(int rank, AsyncParameterServer server) throws Exception;
    }

    /** Every rank's outcome of {@code body} over aggregators of {@code algorithm} with {@code timeout}. */
    static <T> List<Ranks.Outcome<T>> run(int worldSize, Algorithm algorithm, Duration timeout, Body<T> body) {
        return run(worldSize, algorithm, timeout, Map.of(), body);
    }

    /** As above, with the aggregators' {@code options} (option name to value). */
    static <T> List<Ranks.Outcome<T>> run(int worldSize, Algorithm algorithm, Duration timeout,
            Map<String, String> options, Body<T> body) {
        List<Transport> transports = InProcessTransport.createGroup(worldSize, timeout);
        try {
            return Ranks.run(worldSize, WATCHDOG, rank -> {
                DistributedConfig.Builder builder = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                        .timeout(timeout);
                options.forEach(builder::option);
                DistributedConfig config = builder.build();
                try (GradientAggregator aggregator = algorithm.create(config, transports.get(rank))) {
                    return body.run(rank, aggregator);
                }
            });
        } finally {
            Ranks.closeAll(transports);
        }
    }

    /** Like {@link #run} but fails unless every rank succeeded; the values by rank. */
    static <T> List<T> runAll(int worldSize, Algorithm algorithm, Duration timeout, Body<T> body) {
        return run(worldSize, algorithm, timeout, body).stream().map(Ranks.Outcome::valueOrFail).toList();
    }

    /** Every rank's outcome of {@code body} over asynchronous parameter servers with one server, rank 0. */
    static <T> List<Ranks.Outcome<T>> runAsync(int worldSize, AsyncSettings settings, long[] shape, Duration timeout,
            AsyncBody<T> body) {
        List<Transport> transports = InProcessTransport.createGroup(worldSize, timeout);
        try {
            return Ranks.run(worldSize, WATCHDOG, rank -> {
                DistributedConfig config = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                        .timeout(timeout).option(ParameterServer.SERVERS_OPTION, "1").build();
                try (AsyncParameterServer server = new AsyncParameterServer(config, transports.get(rank), settings,
                        shape)) {
                    return body.run(rank, server);
                }
            });
        } finally {
            Ranks.closeAll(transports);
        }
    }
}
