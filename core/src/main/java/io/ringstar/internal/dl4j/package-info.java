/**
 * Internal, not API: a Deeplearning4j network as ringstar trains it ({@link
 * io.ringstar.internal.dl4j.TrainedNetwork}), the same way for a {@code MultiLayerNetwork} and a
 * {@code ComputationGraph}. Public only for {@link io.ringstar.dl4j.DataParallel} and {@code
 * io.ringstar.spark}; may change in any release.
 */
package io.ringstar.internal.dl4j;
