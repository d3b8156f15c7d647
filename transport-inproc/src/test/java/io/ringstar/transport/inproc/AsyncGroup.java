package io.ringstar.transport.inproc;

import io.ringstar.AsyncParameterServer;
import io.ringstar.AsyncSettings;
import io.ringstar.DistributedConfig;
import io.ringstar.ParameterServer;
import io.ringstar.Transport;
import io.ringstar.testing.Ranks;
import java.time.Duration;
import java.util.List;

/**
 * Runs one body per rank of a fresh in-process group, each with its own {@link
 * AsyncParameterServer} (which owns and closes the rank's transport).
 */
final class AsyncGroup {
    /** The bound of every wait of the parameter server in these tests. */
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private AsyncGroup() {
    }

    /** One rank's code, given its parameter server and its transport (to kill it). */
    @FunctionalInterface
    interface Body<T> {
        T run(AsyncParameterServer ps, Transport transport) throws Exception;
    }

    /** Every rank's value, or an AssertionError that lists every rank's error (the first cause among them). */
    static <T> List<T> values(List<Ranks.Outcome<T>> outcomes) {
        StringBuilder errors = new StringBuilder();
        Throwable first = null;
        for (Ranks.Outcome<T> outcome : outcomes) {
            if (outcome.error != null) {
                errors.append("\n  rank ").append(outcome.rank).append(": ").append(outcome.error);
                first = first == null || outcome.error instanceof AssertionError ? outcome.error : first;
            }
        }
        if (first != null) {
            throw new AssertionError("ranks failed:" + errors, first);
        }
        return outcomes.stream().map(outcome -> outcome.value).toList();
    }

    static <T> List<Ranks.Outcome<T>> run(int worldSize, int servers, AsyncSettings settings, long[][] shapes,
            Body<T> body) {
        return run(worldSize, servers, settings, shapes, InProcessTransport.createGroup(worldSize, TIMEOUT), body);
    }

    /** As above over transports the caller made (to close one from another rank). */
    static <T> List<Ranks.Outcome<T>> run(int worldSize, int servers, AsyncSettings settings, long[][] shapes,
            List<Transport> transports, Body<T> body) {
        return run(worldSize, servers, settings, shapes, transports, TIMEOUT, body);
    }

    /** As above with another timeout. */
    static <T> List<Ranks.Outcome<T>> run(int worldSize, int servers, AsyncSettings settings, long[][] shapes,
            List<Transport> transports, Duration timeout, Body<T> body) {
        return Ranks.run(worldSize, TIMEOUT.multipliedBy(4), rank -> {
            DistributedConfig config = DistributedConfig.builder().worldSize(worldSize).rank(rank).timeout(timeout)
                    .option(ParameterServer.SERVERS_OPTION, Integer.toString(servers)).build();
            try (AsyncParameterServer ps = new AsyncParameterServer(config, transports.get(rank), settings, shapes)) {
                return body.run(ps, transports.get(rank));
            }
        });
    }
}
