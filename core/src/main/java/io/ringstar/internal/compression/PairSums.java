package io.ringstar.internal.compression;

import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Sums of top-k pairs into dense values: what every rank of a gathered top-k all-reduce, or the
 * server of a sparse star partition, does with the pairs it receives. A dense range is zeroed,
 * then each rank's pairs are added into it in rank order, in the window's type (float32 sums for
 * FLOAT, float64 for DOUBLE), so whoever sums the same pairs gets the same bits.
 */
public final class PairSums {
    private PairSums() {
    }

    /** Sets {@code bytes} bytes of {@code buffer} from {@code offset} to zero (+0.0 for floats). */
    public static void zero(ByteBuffer buffer, int offset, int bytes) {
        int at = offset;
        int end = offset + bytes;
        for (; at + Long.BYTES <= end; at += Long.BYTES) {
            buffer.putLong(at, 0L);
        }
        for (; at < end; at++) {
            buffer.put(at, (byte) 0);
        }
    }

    /**
     * {@code dense[index] += value} for {@code count} pairs whose indices are at byte
     * {@code indexOffset} of {@code pairs} and values at byte {@code valueOffset}; an index counts
     * elements of {@code type} from byte 0 of {@code dense}.
     *
     * @throws IllegalArgumentException for an index outside {@code [0, elements)}, which only a
     *     damaged or foreign message carries
     */
    public static void add(ElementType type, ByteBuffer dense, long elements, ByteBuffer pairs, int indexOffset,
            int valueOffset, int count) {
        for (int p = 0; p < count; p++) {
            int index = pairs.getInt(indexOffset + p * PairLayout.INDEX_BYTES);
            if (index < 0 || index >= elements) {
                throw new IllegalArgumentException("a top-k pair names element " + index + " of a window of "
                        + elements);
            }
            if (type == ElementType.DOUBLE) {
                int at = index * Double.BYTES;
                dense.putDouble(at, dense.getDouble(at) + pairs.getDouble(valueOffset + p * Double.BYTES));
            } else {
                int at = index * Float.BYTES;
                dense.putFloat(at, dense.getFloat(at) + pairs.getFloat(valueOffset + p * Float.BYTES));
            }
        }
    }
}
