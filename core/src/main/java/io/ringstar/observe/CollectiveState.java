package io.ringstar.observe;

/** Where one collective call is, as a {@link CollectiveListener} and a trace dump see it. */
public enum CollectiveState {
    /** Handed to the background thread by a non-blocking call; not running yet. */
    ISSUED,
    /** Running on this rank: sending, receiving, or waiting for its peers. */
    STARTED,
    /** Done on this rank, its results in place. */
    COMPLETED,
    /** Ended with an exception; the group is failed. */
    FAILED;

    /** The lower-case name trace dumps use ({@code "started"}). */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
