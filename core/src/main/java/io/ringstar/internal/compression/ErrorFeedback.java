package io.ringstar.internal.compression;

import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * The residuals of top-k compression on one rank: what was not sent, kept and added to the next
 * call's values. One dense buffer per layout of tensors (a call with other shapes or types has its
 * own) and element type, holding the group's elements in the call's order, zero at first. Memory:
 * one dense copy of the gradients of every layout compressed so far, kept until {@link #clear}
 * (the engine's close). Looking up the same layout as the call before allocates nothing.
 *
 * <p>Not thread-safe.
 */
public final class ErrorFeedback {
    private final Map<Long, Map<ElementType, ByteBuffer>> byLayout = new HashMap<>();
    private long lastFingerprint;
    private Map<ElementType, ByteBuffer> last;

    /**
     * The residual of the group of {@code type} in calls of layout {@code fingerprint}: a buffer of
     * {@code elements} elements, little-endian, position 0.
     */
    public ByteBuffer residual(long fingerprint, ElementType type, long elements) {
        if (last == null || fingerprint != lastFingerprint) {
            last = byLayout.computeIfAbsent(fingerprint, key -> new EnumMap<>(ElementType.class));
            lastFingerprint = fingerprint;
        }
        ByteBuffer residual = last.get(type);
        long bytes = elements * type.bytes();
        if (residual == null || residual.capacity() != bytes) {
            residual = ByteBuffer.allocateDirect(Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
            last.put(type, residual);
        }
        return residual;
    }

    /** The residual kept for {@code fingerprint} and {@code type}, or null: for tests. */
    public ByteBuffer existing(long fingerprint, ElementType type) {
        Map<ElementType, ByteBuffer> groups = byLayout.get(fingerprint);
        return groups == null ? null : groups.get(type);
    }

    /** Bytes the residuals hold. */
    public long bytes() {
        long total = 0;
        for (Map<ElementType, ByteBuffer> groups : byLayout.values()) {
            for (ByteBuffer residual : groups.values()) {
                total += residual.capacity();
            }
        }
        return total;
    }

    /** Drops every residual. */
    public void clear() {
        byLayout.clear();
        last = null;
    }
}
