/**
 * <b>Internal</b>: the collectives behind the aggregators of {@code io.ringstar}, one class per
 * algorithm (the star's {@link io.ringstar.algorithm.StarReduce} and
 * {@link io.ringstar.algorithm.StarBroadcast}, the ring's {@link io.ringstar.algorithm.RingAllReduce} and
 * {@link io.ringstar.algorithm.RingBroadcast}), and {@link io.ringstar.algorithm.CollectiveCall}, through
 * which they write and check every message of one call. {@link io.ringstar.algorithm.Failures} keeps a
 * failure's type as it crosses ranks.
 *
 * <p>Its classes are public only because the aggregators in {@code io.ringstar} call them; applications
 * use the aggregators, and these classes may change in any release.
 */
package io.ringstar.algorithm;
