/**
 * <b>Internal</b>: tensors as bytes. The layout of one call's tensors
 * ({@link TensorLayout}), their packing into one buffer per element type
 * ({@link TensorBucket}), the element-wise kernels of the collectives
 * ({@link Reduction}), the element types ringstar reduces
 * ({@link ElementType}), result copies and raw tensor memory. Public only for the
 * algorithms, the checkpoint files and the benchmarks in other packages; may change in any release.
 */
package io.ringstar.internal.tensor;
