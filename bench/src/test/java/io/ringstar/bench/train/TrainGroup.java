package io.ringstar.bench.train;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.transport.inproc.InProcessTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs one {@link Trainer} per rank as threads of this JVM over the in-process transport, as TrainCommand will. */
final class TrainGroup {
    private TrainGroup() {
    }

    /** What each rank's run returned or threw, by rank. */
    record Result(List<Trainer.Outcome> outcomes, List<Throwable> errors) {
        Trainer.Outcome rank(int rank) {
            if (errors.get(rank) != null) {
                throw new AssertionError("rank " + rank + " failed: " + errors.get(rank), errors.get(rank));
            }
            return outcomes.get(rank);
        }
    }

    static Result run(int worldSize, Duration timeout, Trainer trainer) throws InterruptedException {
        List<Transport> transports = InProcessTransport.createGroup(worldSize, timeout);
        ExecutorService pool = Executors.newFixedThreadPool(worldSize, runnable -> {
            Thread thread = new Thread(runnable, "train-test-rank");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<Trainer.Outcome>> futures = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                int r = rank;
                futures.add(pool.submit(() -> {
                    Transport transport = transports.get(r);
                    try {
                        DistributedConfig config = DistributedConfig.builder().worldSize(worldSize).rank(r)
                                .timeout(timeout).build();
                        return trainer.runWithParameters(config, transport);
                    } finally {
                        // As the command does: a rank that ends, well or not, closes its transport.
                        transport.close();
                    }
                }));
            }
            List<Trainer.Outcome> outcomes = new ArrayList<>();
            List<Throwable> errors = new ArrayList<>();
            long deadline = System.nanoTime() + timeout.multipliedBy(3).toNanos();
            for (int rank = 0; rank < worldSize; rank++) {
                try {
                    outcomes.add(futures.get(rank).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                    errors.add(null);
                } catch (ExecutionException e) {
                    outcomes.add(null);
                    errors.add(e.getCause());
                } catch (TimeoutException e) {
                    throw new AssertionError("rank " + rank + " did not finish", e);
                }
            }
            return new Result(outcomes, errors);
        } finally {
            pool.shutdownNow();
        }
    }
}
