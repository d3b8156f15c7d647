/**
 * {@code ringstar train}: data-parallel SGD of a small classifier, with the gradients averaged every step
 * by the star or the ring (synchronous) or applied by a parameter server as they come (asynchronous), and
 * checkpoints that let a synchronous run resume bit for bit. The data sets are in
 * {@code io.ringstar.train.data}, the models in {@code io.ringstar.train.model}. The training
 * application: it depends on neither the command line ({@code io.ringstar.cli}) nor the measurement.
 */
package io.ringstar.train;
