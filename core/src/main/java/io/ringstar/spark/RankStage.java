package io.ringstar.spark;

import io.ringstar.DistributedConfig;
import io.ringstar.PeerFailureException;
import io.ringstar.Transports;
import io.ringstar.internal.launch.RankScope;
import io.ringstar.spi.BoundTransport;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.BarrierTaskInfo;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * The barrier stage of a {@link SparkRanks} job, as Spark runs it on the executors: each task is
 * one rank. Rank 0 binds its endpoint on its executor's host first and publishes the address it
 * bound through the barrier context's {@code allGather}, which every rank calls; then every rank
 * runs the job's {@link RankTask} in a {@link RankScope}, whose transports are closed when the task
 * ends, however it ends.
 */
final class RankStage<T, R extends Serializable>
        extends AbstractFunction1<Iterator<T>, Iterator<RankStage.Output<R>>> implements Serializable {
    private static final long serialVersionUID = 1L;
    /** The prefixes of rank 0's message: the address it bound, or why it could not bind. */
    private static final String BOUND = "bound ";
    private static final String FAILED = "failed ";

    private final JobSettings job;
    private final RankTask<T, R> task;

    RankStage(JobSettings job, RankTask<T, R> task) {
        this.job = job;
        this.task = task;
    }

    @Override
    public Iterator<Output<R>> apply(Iterator<T> partition) {
        int rank = BarrierTaskContext.get().partitionId();
        R result = runRank(CollectionConverters.asJava(partition));
        return CollectionConverters.asScala(List.of(new Output<>(rank, result)).iterator());
    }

    private R runRank(java.util.Iterator<T> partition) {
        BarrierTaskContext context = BarrierTaskContext.get();
        int rank = context.partitionId();
        BarrierTaskInfo[] tasks = context.getTaskInfos();
        if (tasks.length != job.worldSize()) {
            throw new IllegalStateException("rank " + rank + ": the barrier stage has " + tasks.length
                    + " tasks, the job " + job.worldSize() + " partitions");
        }
        if (task instanceof ReadsWholePartition) {
            // Before the barrier below: see ReadsWholePartition.
            List<T> elements = new ArrayList<>();
            partition.forEachRemaining(elements::add);
            partition = elements.iterator();
        }
        BoundTransport bound = null;
        RuntimeException bindFailure = null;
        String message = "";
        if (rank == 0) {
            String host = host(tasks[0].address());
            try {
                bound = Transports.bind(job.config(0, host + ":0"));
                String address = bound.address();
                if (address.endsWith(":0") && job.worldSize() > 1) {
                    // Nothing was bound (the in-process transport): the job's number names the group instead.
                    bound.close();
                    bound = null;
                    address = host + ":" + job.groupNumber(context.stageAttemptNumber());
                }
                message = BOUND + address;
            } catch (RuntimeException e) {
                bindFailure = e;
                message = FAILED + e;
            }
        }
        String[] messages;
        try {
            messages = context.allGather(message);
        } catch (RuntimeException e) {
            closeQuietly(bound);
            throw e;
        }
        if (bindFailure != null) {
            throw bindFailure;
        }
        if (!messages[0].startsWith(BOUND)) {
            throw new PeerFailureException("open", rank, 0, "rank 0 could not bind its endpoint: "
                    + messages[0].substring(Math.min(FAILED.length(), messages[0].length())));
        }
        DistributedConfig config = job.config(rank, messages[0].substring(BOUND.length()));
        RankScope scope;
        try {
            scope = RankScope.enter(config, bound);
        } catch (RuntimeException e) {
            closeQuietly(bound);
            throw e;
        }
        try (scope) {
            return task.run(config, partition);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new RankTaskFailure(rank, e);
        }
    }

    /** The host of a barrier task's {@code host:port} address, bracketed if it is IPv6. */
    static String host(String address) {
        int colon = address.lastIndexOf(':');
        String host = colon < 0 ? address : address.substring(0, colon);
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    private static void closeQuietly(BoundTransport bound) {
        if (bound != null) {
            bound.close();
        }
    }

    /** One rank's result, with its rank: the shuffle between the stage and the driver does not keep the order. */
    record Output<R>(int rank, R value) implements Serializable {
    }

    /** A checked exception of a rank's task, unchecked for Spark; its cause is the task's exception. */
    static final class RankTaskFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RankTaskFailure(int rank, Exception cause) {
            super("rank " + rank + "'s task threw " + cause, cause);
        }
    }
}
