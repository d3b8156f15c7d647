package io.ringstar.observe;

/**
 * Hears every collective of one communicator or aggregator (or the pushes and pulls of an async
 * parameter server): issued, started, completed, failed. Register it with
 * {@code addListener} on the communicator or aggregator; every method is optional.
 *
 * <p>Called on the thread that issues or runs the call, in the order each call's states happen,
 * while the call waits: a listener must be quick and must not call the communicator. A
 * non-blocking call is issued on the caller's thread while the background thread may be reporting
 * an earlier call's start or end, so a listener of non-blocking calls must be thread-safe. An
 * exception a listener throws is logged (once per listener) and otherwise ignored: it never fails
 * a collective. A blocking call is issued and started at once (both
 * methods are called); only a non-blocking call spends time issued.
 *
 * <p>Each call of a method receives a new {@link CollectiveEvent}: with a listener registered a
 * call allocates a few small objects, which a rank with none does not.
 */
public interface CollectiveListener {
    /** The call was made and queued behind the calls in flight. */
    default void issued(CollectiveEvent event) {
    }

    /** The call began to run on this rank. */
    default void started(CollectiveEvent event) {
    }

    /** The call completed on this rank. */
    default void completed(CollectiveEvent event) {
    }

    /** The call failed on this rank; {@link CollectiveEvent#failure()} says why. */
    default void failed(CollectiveEvent event) {
    }
}
