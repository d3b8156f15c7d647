/**
 * <b>Public API</b>: saving and resuming a training run's state, usable with or without the
 * aggregators. A {@link io.ringstar.checkpoint.Checkpoint} holds a step, named tensors and metadata; a
 * {@link io.ringstar.checkpoint.CheckpointDirectory} writes them crash-safely, keeps the newest few and
 * loads the latest intact one; {@link io.ringstar.checkpoint.InvalidCheckpointException} names a file
 * that cannot be used. The file format ({@code CheckpointFile}) is internal.
 */
package io.ringstar.checkpoint;
