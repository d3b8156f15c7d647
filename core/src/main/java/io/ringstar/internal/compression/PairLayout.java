package io.ringstar.internal.compression;

import io.ringstar.internal.algorithm.ChunkLayout;
import io.ringstar.internal.tensor.ElementType;

/**
 * Where one rank's top-k pairs of one window lie, the same on every rank. The window's
 * {@code total} elements are cut into selection segments: the chunks of the window, as many as
 * {@code max(1, ceil(total / maxChunkElements))}, of near-equal length (they differ by at most one
 * element), whatever the algorithm, the world size or the star's number of servers, so the elements
 * chosen never depend on them. Segment {@code s} keeps {@code k_s = ceil(F * length_s)} elements
 * (none of an empty segment). A rank's block holds, segment after segment, the segment's
 * {@code k_s} indices (int32, counted from the window's first element) and then its {@code k_s}
 * values (of the window's type): {@code (4 + b) * k_s} bytes, where {@code b} is the size of a
 * value. Every size is known from the element count, the chunk size and F, so no size is sent.
 *
 * <p>Reused from window to window ({@link #update}); it grows to the most segments seen. Not
 * thread-safe.
 */
public final class PairLayout {
    /** Bytes of one index. */
    public static final int INDEX_BYTES = Integer.BYTES;

    private ElementType type = ElementType.FLOAT;
    private long total;
    private int segments = 1;
    /** {@code pairsBefore[s]}: the pairs of the segments before {@code s}; {@code segments + 1} entries in use. */
    private long[] pairsBefore = new long[2];

    /**
     * Lays out a window of {@code total} elements of {@code type} cut into chunks of at most
     * {@code maxChunkElements}, keeping the fraction {@code fraction} of each.
     *
     * @throws IllegalArgumentException if the pairs of {@code worldSize} ranks would not fit one buffer
     */
    public PairLayout update(long total, int maxChunkElements, double fraction, ElementType type, int worldSize) {
        this.type = type;
        this.total = total;
        this.segments = ChunkLayout.chunkCount(total, maxChunkElements);
        if (pairsBefore.length < segments + 1) {
            pairsBefore = new long[segments + 1];
        }
        pairsBefore[0] = 0;
        for (int s = 0; s < segments; s++) {
            long length = segmentStart(s + 1) - segmentStart(s);
            pairsBefore[s + 1] = pairsBefore[s] + keep(fraction, length);
        }
        if (pairsBefore[segments] * pairBytes() * worldSize > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException(pairsBefore[segments] + " pairs from each of " + worldSize
                    + " ranks do not fit one buffer");
        }
        return this;
    }

    /** How many of {@code length} elements the fraction keeps: {@code ceil(fraction * length)}, at most all. */
    public static long keep(double fraction, long length) {
        return Math.min(length, (long) Math.ceil(fraction * length));
    }

    /** The largest window whose pairs from {@code worldSize} ranks surely fit one buffer, whatever F. */
    public static long maxWindowElements(ElementType type, int worldSize) {
        return (Integer.MAX_VALUE - 64) / ((long) (INDEX_BYTES + type.bytes()) * worldSize);
    }

    public ElementType type() {
        return type;
    }

    /** Elements of the window. */
    public long total() {
        return total;
    }

    /** Number of selection segments. */
    public int segments() {
        return segments;
    }

    /** First element of segment {@code s}; {@code s = segments()} gives the window's end. */
    public long segmentStart(int s) {
        return ChunkLayout.partStart(total, segments, s);
    }

    /** Elements segment {@code s} keeps. */
    public int keep(int s) {
        return (int) (pairsBefore[s + 1] - pairsBefore[s]);
    }

    /** Bytes of one pair: an index and a value. */
    public int pairBytes() {
        return INDEX_BYTES + type.bytes();
    }

    /** Bytes of one rank's block: every segment's pairs. */
    public int blockBytes() {
        return (int) (pairsBefore[segments] * pairBytes());
    }

    /** Byte offset in a block of segment {@code s}'s indices. */
    public int indexOffset(int s) {
        return (int) (pairsBefore[s] * pairBytes());
    }

    /** Byte offset in a block of segment {@code s}'s values, right after its indices. */
    public int valueOffset(int s) {
        return indexOffset(s) + keep(s) * INDEX_BYTES;
    }
}
