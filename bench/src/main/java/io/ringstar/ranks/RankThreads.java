package io.ringstar.ranks;

import io.ringstar.Transport;
import io.ringstar.Transports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.IntUnaryOperator;

/**
 * The ranks of one in-process group as long-lived threads: thread {@code r} runs every task of
 * rank {@code r}, so a benchmark pays for starting threads once, not per call. {@link #run} hands
 * one task to every rank and waits for all of them.
 *
 * <p>The threads are daemons named {@code ringstar-rank-r}, so a rank stuck in a bug cannot keep
 * the JVM alive. Not thread-safe: one caller at a time.
 */
public final class RankThreads implements AutoCloseable {

    /** What one rank does; {@code rank} is in {@code [0, worldSize)}. */
    @FunctionalInterface
    public interface RankTask<T> {
        T run(int rank) throws Exception;
    }

    /** What one rank does with the transport lent to it. */
    @FunctionalInterface
    public interface TransportTask<T> {
        T run(int rank, Transport transport) throws Exception;
    }

    private final ExecutorService[] threads;
    /** The group rank of each local rank, as failures name it. */
    private final int[] groupRanks;

    /** Starts one thread per rank; local rank {@code r} is group rank {@code r}. */
    public RankThreads(int worldSize) {
        this(worldSize, local -> local);
    }

    /** Starts one thread for each of this process's ranks of {@code placement}; failures name their group rank. */
    public RankThreads(RankPlacement placement) {
        this(placement.localRanks(), placement::groupRank);
    }

    private RankThreads(int worldSize, IntUnaryOperator groupRank) {
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be at least 1, was " + worldSize);
        }
        threads = new ExecutorService[worldSize];
        groupRanks = new int[worldSize];
        for (int rank = 0; rank < worldSize; rank++) {
            groupRanks[rank] = groupRank.applyAsInt(rank);
            String name = "ringstar-rank-" + rank;
            threads[rank] = Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, name);
                thread.setDaemon(true);
                return thread;
            });
        }
    }

    public int worldSize() {
        return threads.length;
    }

    /**
     * This process's transports, one per local rank, opened at once through {@link Transports#open}
     * (each blocks until the whole group has formed), within the placement's timeout plus 30 s.
     * Ranks that are threads of this JVM meet at a free loopback port, which the in-process
     * transport takes as the name of its group. If any rank fails to open, the transports that did
     * open are closed before the failure is thrown, so no ports or threads are left behind.
     */
    public List<Transport> openTransports(RankPlacement placement) {
        Transport[] opened = new Transport[threads.length];
        try {
            run(local -> opened[local] = Transports.open(placement.configFor(local)),
                    placement.config().timeout().plusSeconds(30));
            return List.of(opened);
        } catch (RuntimeException e) {
            for (Transport transport : opened) {
                if (transport != null) {
                    transport.close();
                }
            }
            throw e;
        }
    }

    /**
     * Runs {@code task} on every rank's thread at once and waits until all have finished.
     *
     * @param limit how long to wait for all ranks; should exceed the collectives' own timeout, which
     *     is what normally ends a stuck rank
     * @return the ranks' results, element {@code r} from rank {@code r}
     * @throws RankFailureException for the first rank to fail (the others usually fail because of
     *     it; every failed rank is in its {@code failures()}), or naming the ranks still running when
     *     {@code limit} ran out; those are interrupted
     */
    public <T> List<T> run(RankTask<T> task, Duration limit) {
        return run(task, limit, local -> { });
    }

    /**
     * As {@link #run(RankTask, Duration)}, calling {@code afterFailure} with the local rank on a
     * failed rank's thread once its failure is noted.
     */
    private <T> List<T> run(RankTask<T> task, Duration limit, IntConsumer afterFailure) {
        int worldSize = threads.length;
        CountDownLatch finished = new CountDownLatch(worldSize);
        // In the order the ranks failed: the first is usually the cause of the others.
        Queue<RankFailureException.RankFailure> failures = new ConcurrentLinkedQueue<>();
        List<Future<T>> futures = new ArrayList<>(worldSize);
        for (int rank = 0; rank < worldSize; rank++) {
            int r = rank;
            futures.add(threads[rank].submit(() -> {
                try {
                    return task.run(r);
                } catch (Exception | Error e) {
                    failures.add(new RankFailureException.RankFailure(groupRanks[r], e));
                    afterFailure.accept(r);
                    throw e;
                } finally {
                    finished.countDown();
                }
            }));
        }
        boolean allFinished;
        try {
            allFinished = finished.await(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            futures.forEach(future -> future.cancel(true));
            throw new RankFailureException("interrupted while waiting for the ranks", e);
        }
        if (!allFinished) {
            List<Integer> running = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                if (!futures.get(rank).isDone()) {
                    running.add(rank);
                }
                futures.get(rank).cancel(true);
            }
            RankFailureException failure = failures.isEmpty() ? null : new RankFailureException(List.copyOf(failures));
            throw new RankFailureException("ranks " + running + " did not finish within " + limit
                    + (failure == null ? "" : "; first failure: " + failure.getMessage()), failure);
        }
        if (!failures.isEmpty()) {
            throw new RankFailureException(List.copyOf(failures));
        }
        List<T> results = new ArrayList<>(worldSize);
        for (int rank = 0; rank < worldSize; rank++) {
            try {
                results.add(futures.get(rank).get());
            } catch (InterruptedException | ExecutionException e) {
                // Unreachable: every task has finished without failing.
                throw new RankFailureException(rank, e);
            }
        }
        return results;
    }

    /**
     * {@link #run} with each rank's transport lent to its task (the transport stays open). A rank
     * whose task throws closes its transport before the failure goes on, so that the other ranks
     * learn at once ({@code PeerFailureException} naming it) instead of by their timeout.
     *
     * @param transports this process's transports, element {@code r} for local rank {@code r}
     */
    public <T> List<T> runLending(List<Transport> transports, TransportTask<T> task, Duration limit) {
        // Closed only once the failure is noted, so that it comes before the failures it causes.
        return run(local -> task.run(local, transports.get(local)), limit, local -> transports.get(local).close());
    }

    /** Stops the threads, interrupting any task still running. */
    @Override
    public void close() {
        for (ExecutorService thread : threads) {
            thread.shutdownNow();
        }
    }
}
