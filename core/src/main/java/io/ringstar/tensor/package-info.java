/**
 * <b>Internal</b>: tensors as bytes. The layout of one call's tensors
 * ({@link io.ringstar.tensor.TensorLayout}), their packing into one buffer per element type
 * ({@link io.ringstar.tensor.TensorBucket}), the element-wise kernels of the collectives
 * ({@link io.ringstar.tensor.Reduction}), the element types ringstar reduces
 * ({@link io.ringstar.tensor.ElementType}), result copies and raw tensor memory. Public only for the
 * algorithms, the checkpoint files and the benchmarks in other packages; may change in any release.
 */
package io.ringstar.tensor;
