/**
 * <b>Internal</b>: the collectives behind the aggregators and the communicator of {@code io.ringstar},
 * one class per algorithm: the star's {@link StarReduce} and
 * {@link StarBroadcast}; the ring's {@link RingAllReduce} and
 * {@link RingBroadcast} (from any root); and for the general collectives
 * {@link RecursiveDoubling} (all-reduce, barrier),
 * {@link RingAllGather}, {@link RingReduceScatter} and
 * {@link DirectReduce}. {@link CollectiveCall} writes and
 * checks every message of one call; {@link Failures} keeps a failure's type as it
 * crosses ranks. {@code ALGORITHMS.md} at the repository's root gives each algorithm's steps and bytes.
 *
 * <p>Its classes are public only because {@code io.ringstar} calls them; applications use the
 * aggregators and the communicator, and these classes may change in any release.
 */
package io.ringstar.internal.algorithm;
