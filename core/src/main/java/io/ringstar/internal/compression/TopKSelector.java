package io.ringstar.internal.compression;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.Reduction;
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
 * wherever it is made. The k-th largest magnitude is found by a radix select on those bits, 11 bits
 * a pass, each pass over the elements whose keys still match the digits found so far (the whole
 * segment once, then few: 3 passes for FLOAT, 6 for DOUBLE), with no sort; a last pass writes the
 * pairs. Only FLOAT and DOUBLE are selected.
 *
 * <p>Reused: its key and candidate arrays grow to the longest segment (one chunk) and stay; nothing
 * else allocates. Not thread-safe.
 */
public final class TopKSelector {
    /** Bits of a radix digit: a float's magnitude takes three passes, and the first splits exponents. */
    private static final int DIGIT_BITS = 11;

    private final int[] counts = new int[1 << DIGIT_BITS];
    /** The segment's magnitude keys, read once from the buffer. */
    private long[] keys = new long[0];
    /** The elements whose key still matches the threshold's digits found so far. */
    private int[] candidates = new int[0];
    /** Of the elements whose key equals the threshold, how many the segment takes (the lowest indices). */
    private int equalToTake;

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
        int size = type.bytes();
        for (int s = 0; s < layout.segments(); s++) {
            int keep = layout.keep(s);
            if (keep == 0) {
                continue;
            }
            int from = (int) layout.segmentStart(s);
            int length = (int) layout.segmentStart(s + 1) - from;
            int first = residualOffset + from * size;
            readKeys(type, residual, first, length);
            long threshold = threshold(type, length, keep);
            int index = blockOffset + layout.indexOffset(s);
            int value = blockOffset + layout.valueOffset(s);
            int equal = equalToTake;
            for (int i = 0; i < length; i++) {
                long key = keys[i];
                if (key > threshold || (key == threshold && equal-- > 0)) {
                    int at = first + i * size;
                    block.putInt(index, from + i);
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

    private void readKeys(ElementType type, ByteBuffer buffer, int first, int length) {
        if (keys.length < length) {
            keys = new long[length];
            candidates = new int[length];
        }
        int size = type.bytes();
        for (int i = 0; i < length; i++) {
            keys[i] = key(type, buffer, first + i * size);
        }
    }

    /**
     * The key of the {@code keep}-th largest of the {@code length} keys, by radix select from the top
     * digit down; each pass keeps only the elements that still match, so after the first pass over all
     * keys the others are short. Sets {@link #equalToTake}.
     */
    private long threshold(ElementType type, int length, int keep) {
        if (keep == length) {
            equalToTake = length;
            return 0;
        }
        int shift = type.bytes() * 8 - 1;
        long prefix = 0;
        int wanted = keep;
        int matching = length;
        boolean firstPass = true;
        while (shift > 0) {
            int width = Math.min(DIGIT_BITS, shift);
            shift -= width;
            int digitMask = (1 << width) - 1;
            Arrays.fill(counts, 0, 1 << width, 0);
            for (int j = 0; j < matching; j++) {
                counts[(int) (keys[firstPass ? j : candidates[j]] >>> shift) & digitMask]++;
            }
            int digit = digitMask;
            while (counts[digit] < wanted) {
                wanted -= counts[digit];
                digit--;
            }
            int kept = 0;
            for (int j = 0; j < matching; j++) {
                int element = firstPass ? j : candidates[j];
                if (((int) (keys[element] >>> shift) & digitMask) == digit) {
                    candidates[kept++] = element;
                }
            }
            matching = kept;
            firstPass = false;
            prefix |= (long) digit << shift;
        }
        equalToTake = wanted;
        return prefix;
    }
}
