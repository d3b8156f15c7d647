package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.Reduction.DIVIDE;

/**
 * The HALF and BFLOAT16 kernels of {@link BlockReduction}: a block arrives as ints, each two
 * 16-bit elements; every element is widened exactly to float32, combined there by
 * {@link FloatKernels} (divided too, in float32) and rounded once to its type, nearest even, with
 * the same bits as {@link HalfFloats} gives element by element.
 *
 * <p>Why so many passes: C2 on JDK 17 vectorizes integer and float loops over arrays of one
 * element size, but neither a loop that widens {@code short} to {@code int} nor one of
 * {@code Float.intBitsToFloat} (measured: about 10 times slower than the passes here). So an int
 * is split into two lanes, its low and its high element, and each lane runs int passes (the
 * conversions, written branch-free with masks), float passes (the op), and crosses between the
 * two by copying the bits from an int array to a float array with {@code Unsafe.copyMemory}.
 * The element-wise op does not care that a lane holds every other element. Still the slowest
 * kernels: measured on a loaded 2-core machine, HALF about 3 and BFLOAT16 about 5 times as fast
 * as the scalar fallback, and a tenth to a quarter of a plain copy ({@code ReductionBenchmark}).
 * Where the JVM has the Vector API, {@link VectorHalfKernels} does the same in one pass instead.
 */
final class HalfKernels {
    private static final int LOW = 0;
    private static final int HIGH = 16;
    /** 2^-14, the smallest normal binary16, as float32 bits. */
    private static final int MIN_NORMAL_HALF = 0x38800000;

    private HalfKernels() {
    }

    /**
     * {@code ints[0] = ints[0] (kernel) ints[1]} for {@code count} ints of packed pairs in the
     * scratch's {@link BlockReduction.Scratch#ints()}; {@code half} tells HALF from BFLOAT16.
     */
    static void combine(int kernel, boolean half, BlockReduction.Scratch scratch, int count, int divisor) {
        int[] a = scratch.ints()[0];
        int[] b = kernel == DIVIDE ? null : scratch.ints()[1];
        int[][] ints = scratch.laneInts();
        float[][] floats = scratch.laneFloats();
        int[] low = ints[4];
        int[] high = ints[0];
        lane(kernel, half, a, b, LOW, ints, floats, count, divisor, low);
        lane(kernel, half, a, b, HIGH, ints, floats, count, divisor, high);
        for (int i = 0; i < count; i++) {
            a[i] = (low[i] & 0xFFFF) | (high[i] << 16);
        }
    }

    /** The elements at {@code shift} of each int, combined, into the low 16 bits of {@code out}. */
    private static void lane(int kernel, boolean half, int[] a, int[] b, int shift, int[][] ints, float[][] floats,
            int count, int divisor, int[] out) {
        float[] first = floats[0];
        float[] second = floats[2];
        widen(half, a, shift, ints[0], ints[1], first, floats[1], count);
        if (b != null) {
            widen(half, b, shift, ints[2], ints[3], second, floats[3], count);
        }
        FloatKernels.floats(kernel, first, second, count, divisor);
        BlockReduction.reinterpret(first, ints[0], count);
        if (half) {
            float[] nudged = floats[1];
            for (int i = 0; i < count; i++) {
                nudged[i] = Math.abs(first[i]) + 0.5f;
            }
            BlockReduction.reinterpret(nudged, ints[1], count);
            narrowHalf(ints[0], ints[1], out, count);
        } else {
            narrowBfloat16(ints[0], out, count);
        }
    }

    /** The lane at {@code shift} of {@code packed} into {@code values} as float32, using the other arrays. */
    private static void widen(boolean half, int[] packed, int shift, int[] bits, int[] correctionBits, float[] values,
            float[] corrections, int count) {
        if (!half) {
            for (int i = 0; i < count; i++) {
                bits[i] = (packed[i] >>> shift) << 16;
            }
            BlockReduction.reinterpret(bits, values, count);
            return;
        }
        widenHalf(packed, shift, bits, correctionBits, count);
        BlockReduction.reinterpret(bits, values, count);
        BlockReduction.reinterpret(correctionBits, corrections, count);
        for (int i = 0; i < count; i++) {
            values[i] -= corrections[i];
        }
    }

    /**
     * Binary16 to float32 bits by moving the exponent and mantissa: normal values, infinities and
     * NaNs need only integer steps. A subnormal m * 2^-24 (m < 1024) is written as the float
     * 2^-14 + m * 2^-24 with {@code correction} 2^-14 (both signed), whose difference, taken in
     * float32, is exact; every other element's correction is +0, which leaves it (and -0) as it
     * is. Zero is a subnormal too, but subtracting would turn -0 into +0: its bits are its sign.
     * (Written so on purpose: with the sign taken as {@code (half & 0x8000) << 16} and the zero
     * mask as {@code -magnitude >> 31}, C2 left this loop scalar and 20 times slower.)
     */
    private static void widenHalf(int[] packed, int shift, int[] bits, int[] correction, int count) {
        for (int i = 0; i < count; i++) {
            int half = packed[i] >>> shift;
            int sign = (half << 16) & 0x80000000;
            int magnitude = half & 0x7FFF;
            int subnormalOrZero = (magnitude - 0x400) >> 31;
            int zero = (magnitude - 1) >> 31;
            int infinite = (0x7BFF - magnitude) >> 31;
            int moved = (magnitude << 13) + 0x38000000 + (infinite & 0x38000000) + (subnormalOrZero & 0x00800000);
            bits[i] = sign | (moved & ~zero);
            correction[i] = (subnormalOrZero ^ zero) & (sign | MIN_NORMAL_HALF);
        }
    }

    /**
     * Float32 bits to binary16 bits, rounded to nearest even, as {@link HalfFloats#floatToHalf}:
     * each of the three cases is computed for every element and a mask keeps the right one.
     * Normal results round by adding below the cut; results below 2^-14 come from
     * {@code nudged = |value| + 0.5f}, whose float32 addition already rounded the value to a
     * multiple of 2^-24 (the spacing of floats in [0.5, 1)), nearest even.
     */
    private static void narrowHalf(int[] bits, int[] nudged, int[] out, int count) {
        for (int i = 0; i < count; i++) {
            int value = bits[i];
            int magnitude = value & 0x7FFFFFFF;
            int sign = (value >>> 16) & 0x8000;
            int normal = (magnitude - 0x38000000 + 0xFFF + ((magnitude >>> 13) & 1)) >>> 13;
            int subnormal = nudged[i] - 0x3F000000;
            int nan = (0x7F800000 - magnitude) >> 31;
            int tooLarge = 0x7C00 | (nan & (0x200 | ((magnitude >>> 13) & 0x3FF)));
            int isTooLarge = (0x477FEFFF - magnitude) >> 31;
            int isSubnormal = (magnitude - MIN_NORMAL_HALF) >> 31;
            out[i] = sign | (tooLarge & isTooLarge) | (subnormal & isSubnormal)
                    | (normal & ~(isTooLarge | isSubnormal));
        }
    }

    /** Float32 bits to bfloat16 bits, as {@link HalfFloats#floatToBfloat16}, with a mask for NaN. */
    private static void narrowBfloat16(int[] bits, int[] out, int count) {
        for (int i = 0; i < count; i++) {
            int value = bits[i];
            int nan = (0x7F800000 - (value & 0x7FFFFFFF)) >> 31;
            int rounded = (value + 0x7FFF + ((value >>> 16) & 1)) >>> 16;
            out[i] = (rounded & ~nan) | (((value >>> 16) | 0x40) & nan);
        }
    }
}
