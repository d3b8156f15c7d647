package io.ringstar.testing;

import io.ringstar.Transport;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;

/**
 * One formed group of transports that a test class's cases share while they ask for the same world
 * size: forming a network group costs more than most of the cases that use it. It holds one group at
 * a time (a group of another size closes the one held), so a class never keeps more ranks open
 * than its largest case needs. A case that leaves the group in doubt (a rank failed, the watchdog
 * fired) {@linkplain #discard() discards} it, and the next case forms a fresh one.
 *
 * <p>Not thread-safe: the cases of one class run one after the other.
 */
final class ReusedGroup implements AutoCloseable {
    private final BiFunction<Integer, Duration, List<Transport>> factory;
    private final Duration timeout;
    private List<Transport> group;
    private int worldSize;

    /** Groups come from {@code factory}, each transport with {@code timeout}. */
    ReusedGroup(BiFunction<Integer, Duration, List<Transport>> factory, Duration timeout) {
        this.factory = factory;
        this.timeout = timeout;
    }

    /** The group of {@code worldSize} ranks, formed now if the one held has another size or none is held. */
    List<Transport> of(int worldSize) {
        if (group == null || this.worldSize != worldSize) {
            close();
            group = factory.apply(worldSize, timeout);
            this.worldSize = worldSize;
        }
        return group;
    }

    /** Closes the group held, if any, so that the next {@link #of} forms a fresh one. */
    void discard() {
        close();
    }

    /** Closes every transport of the group held. */
    @Override
    public void close() {
        List<Transport> closing = group;
        group = null;
        if (closing == null) {
            return;
        }
        Ranks.closeAll(closing);
    }
}
