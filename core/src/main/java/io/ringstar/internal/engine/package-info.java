/**
 * <b>Internal</b>: not API, may change in any release. The engine behind {@link io.ringstar.Communicator}
 * and the aggregators: the queue of calls, the request that describes one call, the one place
 * every collective runs through ({@code CollectiveEngine.run}), the aggregators' out-of-place
 * calls, and the compression of a window of tensors. Public here is only what {@code io.ringstar}
 * uses.
 */
package io.ringstar.internal.engine;
