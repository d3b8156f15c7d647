package io.ringstar.spark;

import io.ringstar.DistributedConfig;
import java.io.Serializable;
import java.util.Iterator;

/**
 * The work of one rank of a {@link SparkRanks} job, run in one task of a Spark barrier stage. It is
 * serialized on the driver and run on an executor, so it must be {@link Serializable} and carry
 * only what it needs.
 *
 * @param <T> the elements of the job's RDD
 * @param <R> what each rank returns to the driver
 */
@FunctionalInterface
public interface RankTask<T, R> extends Serializable {

    /**
     * Runs this rank's part of the job. {@code config} has the rank (the partition's index), the
     * world size (the RDD's number of partitions), the coordinator on rank 0's executor, the job's
     * id and secret, the transport and the options the job was given; open transports with it
     * ({@link io.ringstar.Transports#open}, {@link io.ringstar.Communicator#open}, ...). A transport
     * the task leaves open is closed when it returns or throws.
     *
     * @param config this rank's configuration
     * @param partition the elements of this rank's partition, read once
     * @return what the driver receives for this rank, in {@link SparkRanks#run}'s list at index
     *     {@code config.rank()}
     * @throws Exception to fail the job; the driver's exception then carries it in its cause chain
     */
    R run(DistributedConfig config, Iterator<T> partition) throws Exception;
}
