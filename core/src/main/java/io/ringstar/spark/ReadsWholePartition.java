package io.ringstar.spark;

/**
 * Marks a {@link RankTask} that reads its whole partition into memory anyway ({@link FitTask}):
 * {@link RankStage} then reads it before the ranks meet at the barrier where rank 0 publishes its
 * address, so that computing a partition, which may take longer than ringstar's timeout, is waited
 * for under Spark's barrier timeout, and the task needs no second barrier of its own (each costs
 * about a second: Spark polls for a barrier's end once a second).
 */
interface ReadsWholePartition {
}
