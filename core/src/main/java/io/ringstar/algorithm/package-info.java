/**
 * <b>Internal</b>: the collectives behind the aggregators and the communicator of {@code io.ringstar},
 * one class per algorithm: the star's {@link io.ringstar.algorithm.StarReduce} and
 * {@link io.ringstar.algorithm.StarBroadcast}; the ring's {@link io.ringstar.algorithm.RingAllReduce} and
 * {@link io.ringstar.algorithm.RingBroadcast} (from any root); and for the general collectives
 * {@link io.ringstar.algorithm.RecursiveDoubling} (all-reduce, barrier),
 * {@link io.ringstar.algorithm.RingAllGather}, {@link io.ringstar.algorithm.RingReduceScatter} and
 * {@link io.ringstar.algorithm.DirectReduce}. {@link io.ringstar.algorithm.CollectiveCall} writes and
 * checks every message of one call; {@link io.ringstar.algorithm.Failures} keeps a failure's type as it
 * crosses ranks. {@code ALGORITHMS.md} at the repository's root gives each algorithm's steps and bytes.
 *
 * <p>Its classes are public only because {@code io.ringstar} calls them; applications use the
 * aggregators and the communicator, and these classes may change in any release.
 */
package io.ringstar.algorithm;
