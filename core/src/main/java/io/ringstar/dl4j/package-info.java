/**
 * <b>Public API</b>, for Deeplearning4j users: data-parallel training of a {@code MultiLayerNetwork}
 * or {@code ComputationGraph} through ringstar ({@link io.ringstar.dl4j.DataParallel}), and the
 * shard of a {@code DataSetIterator} each rank trains on.
 *
 * <p>ringstar-core declares {@code org.deeplearning4j:deeplearning4j-nn} as an optional dependency:
 * a project that uses this package declares it itself (the release ringstar is built with,
 * 1.0.0-M2.1, matching ND4J); a project that does not never loads these classes.
 */
package io.ringstar.dl4j;
