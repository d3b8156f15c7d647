package io.ringstar.internal.algorithm;

/**
 * How a bucket is cut into near-equal parts (ring segments, or chunks) whose sizes differ by at
 * most one element. Every rank computes the same cuts from the same element count, so no cut is
 * ever sent. Also the segments of top-k compression ({@code io.ringstar.internal.compression.PairLayout}),
 * which are the chunks of a window.
 */
public final class ChunkLayout {
    private ChunkLayout() {
    }

    /** First element of part {@code index} when {@code total} elements are cut into {@code parts}. */
    public static long partStart(long total, int parts, int index) {
        return Math.multiplyExact(total, (long) index) / parts;
    }

    /** {@link #partStart} in bytes, for elements of {@code elementBytes} bytes; fits an int since buckets do. */
    static int partStartByte(long total, int parts, int index, int elementBytes) {
        return Math.toIntExact(partStart(total, parts, index) * elementBytes);
    }

    /** How many chunks of at most {@code maxChunkElements} the longest of the parts needs; at least 1. */
    public static int chunkCount(long longestPart, int maxChunkElements) {
        return (int) Math.max(1, (longestPart + maxChunkElements - 1) / maxChunkElements);
    }

    /** Elements in the longest part when {@code total} elements are cut into {@code parts}. */
    static long longestPart(long total, int parts) {
        return (total + parts - 1) / parts;
    }
}
