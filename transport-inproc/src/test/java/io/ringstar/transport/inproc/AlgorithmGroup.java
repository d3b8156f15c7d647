package io.ringstar.transport.inproc;

import io.ringstar.CollectiveException;
import io.ringstar.Deadline;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.testing.Ranks;
import java.time.Duration;
import java.util.List;

/**
 * Runs one body per rank over a fresh in-process group, each rank driving its own
 * {@link CollectiveCall} directly, the way the aggregators do: a failed rank tells its peers
 * ({@link CollectiveCall#abortPeers}), so that a bug fails the group at once instead of leaving
 * the other ranks to their timeout. The group is closed at the end.
 */
final class AlgorithmGroup {
    /** The largest chunk the tests use, in bytes: 1 MiB. */
    static final int MAX_PAYLOAD_BYTES = 1 << 20;

    /** One rank's side of the group: its call, and the sequence number of its next collective. */
    static final class Session {
        final int rank;
        final int worldSize;
        final CollectiveCall call;
        private final Duration callTimeout;
        private long sequence;

        Session(int rank, int worldSize, CollectiveCall call, Duration callTimeout) {
            this.rank = rank;
            this.worldSize = worldSize;
            this.call = call;
            this.callTimeout = callTimeout;
        }

        /** Begins the next collective of {@code count} elements, with no layout (fingerprint 0, no tensors). */
        CollectiveCall begin(String operation, ReduceOp op, int root, ElementType type, long count) {
            return call.begin(operation, sequence++, op, root, null, Deadline.after(callTimeout)).sized(type, count);
        }
    }

    /** The code one rank runs. */
    @FunctionalInterface
    interface Body<T> {
        T run(Session session) throws Exception;
    }

    private AlgorithmGroup() {
    }

    /** Runs {@code body} on every rank of a new group of {@code worldSize} and returns every outcome. */
    static <T> List<Ranks.Outcome<T>> run(int worldSize, boolean checksummed, Duration callTimeout, Duration watchdog,
            Body<T> body) {
        List<Transport> transports = InProcessTransport.createGroup(worldSize, callTimeout);
        try {
            return Ranks.run(worldSize, watchdog, rank -> {
                CollectiveCall call = new CollectiveCall(transports.get(rank), checksummed, MAX_PAYLOAD_BYTES);
                Session session = new Session(rank, worldSize, call, callTimeout);
                try {
                    return body.run(session);
                } catch (CollectiveException e) {
                    call.abortPeers(e);
                    throw e;
                } catch (Exception | AssertionError e) {
                    call.abortPeers(new CollectiveException("test", rank, CollectiveException.NO_RANK, e.toString()));
                    throw e;
                }
            });
        } finally {
            Ranks.closeAll(transports);
        }
    }

    /** Like {@link #run}, but fails unless every rank succeeded; returns the values by rank. */
    static <T> List<T> runAll(int worldSize, boolean checksummed, Duration callTimeout, Duration watchdog,
            Body<T> body) {
        return run(worldSize, checksummed, callTimeout, watchdog, body).stream().map(Ranks.Outcome::valueOrFail)
                .toList();
    }
}
