package io.ringstar.testing;

import io.ringstar.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs one body per rank, each on its own thread, under a watchdog: if any rank has not finished
 * within the limit, the threads are interrupted and the test fails naming the ranks that hung.
 */
public final class Ranks {
    private Ranks() {
    }

    /** The code one rank runs. */
    @FunctionalInterface
    public interface Body<T> {
        T run(int rank) throws Exception;
    }

    /** What one rank's body returned or threw, and how long it took. */
    public static final class Outcome<T> {
        public final int rank;
        public final T value;
        public final Throwable error;
        public final Duration elapsed;

        Outcome(int rank, T value, Throwable error, Duration elapsed) {
            this.rank = rank;
            this.value = value;
            this.error = error;
            this.elapsed = elapsed;
        }

        /** The value, or an AssertionError carrying the rank's exception. */
        public T valueOrFail() {
            if (error != null) {
                throw new AssertionError("rank " + rank + " failed: " + error, error);
            }
            return value;
        }
    }

    /** Runs {@code body} for ranks {@code 0..worldSize-1} at once and returns every outcome, by rank. */
    public static <T> List<Outcome<T>> run(int worldSize, Duration limit, Body<T> body) {
        AtomicInteger threadNumber = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(worldSize, runnable -> {
            Thread thread = new Thread(runnable, "rank-" + threadNumber.getAndIncrement());
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<Outcome<T>>> futures = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                int r = rank;
                futures.add(pool.submit(() -> {
                    long start = System.nanoTime();
                    try {
                        T value = body.run(r);
                        return new Outcome<>(r, value, null, Duration.ofNanos(System.nanoTime() - start));
                    } catch (Throwable e) {
                        return new Outcome<>(r, null, e, Duration.ofNanos(System.nanoTime() - start));
                    }
                }));
            }
            long deadline = System.nanoTime() + limit.toNanos();
            List<Outcome<T>> outcomes = new ArrayList<>();
            List<Integer> hung = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                try {
                    long remaining = Math.max(0, deadline - System.nanoTime());
                    outcomes.add(futures.get(rank).get(remaining, TimeUnit.NANOSECONDS));
                } catch (TimeoutException e) {
                    hung.add(rank);
                    outcomes.add(null);
                } catch (ExecutionException e) {
                    throw new AssertionError("rank " + rank + " runner failed", e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted while waiting for rank " + rank, e);
                }
            }
            if (!hung.isEmpty()) {
                throw new AssertionError("watchdog: ranks " + hung + " of " + worldSize + " did not finish within "
                        + limit);
            }
            return outcomes;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Opens one transport per rank at once, each on its own thread (every rank's constructor waits
     * for the others to form the group), and returns them by rank. If any rank failed, closes the
     * transports that did open and fails naming the first rank's error.
     */
    public static List<Transport> openAll(int worldSize, Duration limit, Body<Transport> open) {
        List<Outcome<Transport>> outcomes = run(worldSize, limit, open);
        for (Outcome<Transport> outcome : outcomes) {
            if (outcome.error != null) {
                AssertionError failed = new AssertionError("the group of " + worldSize + " did not form: rank "
                        + outcome.rank + " failed: " + outcome.error, outcome.error);
                try {
                    closeValues(outcomes);
                } catch (RuntimeException e) {
                    failed.addSuppressed(e);
                }
                throw failed;
            }
        }
        return outcomes.stream().map(outcome -> outcome.value).toList();
    }

    /**
     * Closes every transport that a rank returned (one that failed returned none). All are closed
     * even if one close fails; that failure is thrown afterwards, with any later ones suppressed.
     */
    public static void closeValues(List<Outcome<Transport>> outcomes) {
        closeAll(outcomes.stream().map(outcome -> outcome.value).filter(Objects::nonNull).toList());
    }

    /**
     * Closes every transport given. All are closed even if one close fails; that failure is thrown
     * afterwards, with any later ones suppressed.
     */
    public static void closeAll(List<Transport> transports) {
        RuntimeException failure = null;
        for (Transport transport : transports) {
            try {
                transport.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Like {@link #run} but fails the test if any rank threw; returns the values by rank. */
    public static <T> List<T> runAll(int worldSize, Duration limit, Body<T> body) {
        List<T> values = new ArrayList<>();
        for (Outcome<T> outcome : run(worldSize, limit, body)) {
            values.add(outcome.valueOrFail());
        }
        return values;
    }
}
