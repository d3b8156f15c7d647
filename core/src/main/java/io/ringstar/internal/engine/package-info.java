/**
 * <b>Internal</b>: not API, may change in any release. The engine behind {@link io.ringstar.Communicator}
 * and the aggregators: the queue of calls, the one place every collective runs through, and the
 * compression of a window of tensors.
 */
package io.ringstar.internal.engine;
