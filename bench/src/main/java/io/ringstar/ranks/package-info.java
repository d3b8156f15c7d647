/**
 * What the measurement ({@code io.ringstar.bench}) and training ({@code io.ringstar.train})
 * applications both need to run a group's ranks in this process, kept apart so that neither depends
 * on the other or on the command line: where the ranks run
 * ({@link io.ringstar.ranks.RankPlacement}), the threads that run them under a time limit
 * ({@link io.ringstar.ranks.RankThreads}), how a failed rank is told
 * ({@link io.ringstar.ranks.RankFailureException}), the aggregator each rank uses, by the name the
 * command line gives it ({@link io.ringstar.ranks.Algorithm}), and ND4J's own thread count
 * ({@link io.ringstar.ranks.NativeThreads}). It depends on core and the transports only.
 */
package io.ringstar.ranks;
