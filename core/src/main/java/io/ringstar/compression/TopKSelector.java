package io.ringstar.compression;

import io.ringstar.tensor.ElementType;
import io.ringstar.tensor.Reduction;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The top-k step of one rank with error feedback: {@code g' = g + residual}; in each selection
 * segment of the {@link PairLayout}, the {@code k_s} elements of {@code g'} largest in magnitude
 * go into the rank's block as (index, value) pairs, in index order, and the residual becomes
 * {@code g' - sent}: zero where an element was sent (its exact value goes), {@code g'} elsewhere.
 *
 * <p><b>Which elements.</b> Magnitudes are compared as the bits of {@code |v|} (a NaN above
 * infinity, -0 equal to +0); among equal magnitudes the lower index wins, so the choice is the same
 * wherever it is made. The k-th largest magnitude is found by a radix select on those bits, 8 bits a
 * pass (4 passes over the segment for FLOAT, 8 for DOUBLE), with no sort and no allocation; a last
 * pass writes the pairs. Only FLOAT and DOUBLE are selected.
 *
 * <p>Reused; not thread-safe.
 */
public final class TopKSelector {
    private final int[] counts = new int[256];

    /**
     * Adds the window's values in {@code source} (from byte 0) into {@code residual} (from byte
     * {@code residualOffset}), then writes every segment's pairs into {@code block} from byte
     * {@code blockOffset} and takes what was sent out of the residual.
     */
    public void select(PairLayout layout, ByteBuffer source, ByteBuffer residual, int residualOffset, ByteBuffer block,
            int blockOffset) {
        ElementType type = layout.type();
        if (type != ElementType.FLOAT && type != ElementType.DOUBLE) {
            throw new IllegalArgumentException("top-k selects FLOAT and DOUBLE values, not " + type);
        }
        Reduction.add(type, residual, residualOffset, source, 0, Math.toIntExact(layout.total()));
        for (int s = 0; s < layout.segments(); s++) {
            int keep = layout.keep(s);
            if (keep == 0) {
                continue;
            }
            int from = (int) layout.segmentStart(s);
            int to = (int) layout.segmentStart(s + 1);
            boolean all = keep == to - from;
            long threshold = all ? 0 : threshold(type, residual, residualOffset, from, to, keep);
            int equalToTake = all ? keep : keep - countAbove(type, residual, residualOffset, from, to, threshold);
            int index = blockOffset + layout.indexOffset(s);
            int value = blockOffset + layout.valueOffset(s);
            int size = type.bytes();
            for (int i = from; i < to; i++) {
                int at = residualOffset + i * size;
                long key = key(type, residual, at);
                if (key > threshold || (key == threshold && equalToTake-- > 0)) {
                    block.putInt(index, i);
                    index += PairLayout.INDEX_BYTES;
                    if (type == ElementType.DOUBLE) {
                        block.putDouble(value, residual.getDouble(at));
                        residual.putDouble(at, 0.0);
                    } else {
                        block.putFloat(value, residual.getFloat(at));
                        residual.putFloat(at, 0f);
                    }
                    value += size;
                }
            }
        }
    }

    /** The magnitude key of the element at byte {@code at}: the bits of its absolute value. */
    static long key(ElementType type, ByteBuffer buffer, int at) {
        return type == ElementType.DOUBLE ? buffer.getLong(at) & Long.MAX_VALUE : buffer.getInt(at) & Integer.MAX_VALUE;
    }

    /** The key of the {@code keep}-th largest magnitude of elements {@code [from, to)}, by radix select. */
    private long threshold(ElementType type, ByteBuffer buffer, int offset, int from, int to, int keep) {
        int size = type.bytes();
        long prefix = 0;
        long mask = 0;
        int wanted = keep;
        for (int shift = size * 8 - 8; shift >= 0; shift -= 8) {
            Arrays.fill(counts, 0);
            for (int i = from; i < to; i++) {
                long key = key(type, buffer, offset + i * size);
                if ((key & mask) == prefix) {
                    counts[(int) (key >>> shift) & 0xFF]++;
                }
            }
            int digit = 255;
            while (counts[digit] < wanted) {
                wanted -= counts[digit];
                digit--;
            }
            prefix |= (long) digit << shift;
            mask |= 0xFFL << shift;
        }
        return prefix;
    }

    private static int countAbove(ElementType type, ByteBuffer buffer, int offset, int from, int to, long threshold) {
        int size = type.bytes();
        int above = 0;
        for (int i = from; i < to; i++) {
            if (key(type, buffer, offset + i * size) > threshold) {
                above++;
            }
        }
        return above;
    }
}
