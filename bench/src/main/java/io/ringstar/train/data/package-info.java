/**
 * Training data for {@code ringstar train}: MNIST-format IDX files, CSV files and a seeded synthetic
 * set, each read into a {@link io.ringstar.train.data.Dataset} that every rank splits the same way.
 */
package io.ringstar.train.data;
