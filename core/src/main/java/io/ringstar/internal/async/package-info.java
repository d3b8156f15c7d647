/**
 * <b>Internal</b>: the protocol behind {@link io.ringstar.AsyncParameterServer}. {@link
 * io.ringstar.internal.async.AsyncMessages} writes and checks every message (one transport message each,
 * with a fixed header); {@link ParameterPartition} cuts the flattened parameters
 * into one contiguous range per server; {@link ShardServer} is one server rank's
 * messaging and threads, over its {@code ShardState} (its range of the parameters, the optimizer
 * state, the version, the worker clocks, the staleness bound) and its checkpoints ({@link
 * io.ringstar.internal.async.ShardCheckpoints}); {@link AsyncWorker} is one worker rank.
 *
 * <p>Its classes are public only because {@code io.ringstar} calls them; applications use
 * {@link io.ringstar.AsyncParameterServer}, and these classes may change in any release.
 */
package io.ringstar.internal.async;
