package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.Reduction.ADD;
import static io.ringstar.internal.tensor.Reduction.ADD_AND_DIVIDE;
import static io.ringstar.internal.tensor.Reduction.DIVIDE;
import static io.ringstar.internal.tensor.Reduction.MAXIMUM;
import static io.ringstar.internal.tensor.Reduction.MINIMUM;
import static io.ringstar.internal.tensor.Reduction.MULTIPLY;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The HALF and BFLOAT16 kernels of {@link BlockReduction} written with the incubating Vector API,
 * used only where the JVM was started with {@code --add-modules jdk.incubator.vector}: this class
 * is the only one that names the module, and {@link BlockReduction} loads it only after finding
 * the module in the boot layer, so a JVM without it never links it (and prints no warning).
 *
 * <p>Why: C2 on JDK 17 vectorizes no loop that widens 16-bit elements to 32 bits or reinterprets
 * int bits as float, so {@link HalfKernels} needs a dozen passes over a block; here one pass widens
 * a vector of 16-bit elements to float32 lanes, combines them and narrows them back, with the same
 * bit manipulations (branch-free, selected by masks) and so the same bits as {@link HalfFloats}
 * element by element. The tests compare both with the scalar fallback bit for bit.
 */
final class VectorHalfKernels {
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    /** As many 16-bit lanes as {@link #INTS} has, in half its bits. */
    private static final VectorSpecies<Short> SHORTS =
            VectorSpecies.of(short.class, VectorShape.forBitSize(INTS.vectorBitSize() / 2));
    /** 2^-14, the smallest normal binary16, as float32 bits. */
    private static final int MIN_NORMAL_HALF = 0x38800000;

    private static final IntVector ZERO = IntVector.zero(INTS);
    private static final IntVector INF_NAN_EXPONENT = IntVector.broadcast(INTS, 0x38000000);
    private static final IntVector MIN_INF = IntVector.broadcast(INTS, 0x7C00);
    private static final IntVector TWO_TO_23 = IntVector.broadcast(INTS, 0x4B000000);

    private VectorHalfKernels() {
    }

    /** Lanes per step; a probe that links the class and its species (a JVM that cannot throws here). */
    static int lanes() {
        if (SHORTS.length() != INTS.length()) {
            throw new IllegalStateException("no 16-bit species for " + INTS);
        }
        return INTS.length();
    }

    /**
     * {@code a[i] = a[i] (kernel) b[i]} for {@code count} 16-bit elements ({@code b} unused by
     * DIVIDE): {@code half} tells HALF from BFLOAT16.
     *
     * <p>The operations are the ones JDK 17's C2 compiles to vector instructions on this machine
     * (AVX-512): it leaves {@code convert(I2F)}, {@code abs()} and an {@code add} under a mask to
     * Java code (measured on blocks in L1: HALF 0.9 GB/s with them, 3.0 GB/s without), so a subnormal's mantissa m
     * becomes a float as {@code (2^23 + m) - 2^23}, from the bits {@code 0x4B000000 | m}, and a
     * magnitude is taken with a mask.
     *
     * <p>Each loop is written out in one method, with no call of this class inside: C2 keeps vectors
     * in registers only where every method that handles them is inlined, and it does not inline a
     * callee already compiled to more than {@code InlineSmallCode} bytes (measured: a helper per step
     * made the loop allocate its vectors, 1.3 KB for 50 elements).
     */
    static void combine(int kernel, boolean half, short[] a, short[] b, int count, int divisor) {
        int lanes = INTS.length();
        int bound = count - count % lanes;
        if (half) {
            halves(kernel, a, b, bound, divisor);
        } else {
            bfloats(kernel, a, b, bound, divisor);
        }
        for (int i = bound; i < count; i++) {
            float x = half ? HalfFloats.halfToFloat(a[i]) : HalfFloats.bfloat16ToFloat(a[i]);
            float y = kernel == DIVIDE ? 0f : half ? HalfFloats.halfToFloat(b[i]) : HalfFloats.bfloat16ToFloat(b[i]);
            float result = ScalarReduction.floats(kernel, x, y, divisor);
            a[i] = half ? HalfFloats.floatToHalf(result) : HalfFloats.floatToBfloat16(result);
        }
    }

    /**
     * HALF over {@code bound} elements, a multiple of the lanes. Widening: normal values,
     * infinities and NaNs by moving the exponent and mantissa; a subnormal or zero is its mantissa
     * times 2^-24, exact in float32, with its sign. Narrowing, to nearest even as
     * {@link HalfFloats#floatToHalf} and {@link HalfKernels}: normal results round by adding below
     * the cut; below 2^-14 the float32 addition {@code |value| + 0.5f} rounds to a multiple of
     * 2^-24, nearest even; from 65520 on, infinity; a NaN keeps the top of its payload, quieted.
     */
    private static void halves(int kernel, short[] a, short[] b, int bound, int divisor) {
        int lanes = INTS.length();
        float by = divisor;
        boolean unary = kernel == DIVIDE;
        for (int i = 0; i < bound; i += lanes) {
            IntVector xs = (IntVector) ShortVector.fromArray(SHORTS, a, i).convertShape(VectorOperators.S2I, INTS, 0);
            IntVector ys = unary ? xs
                    : (IntVector) ShortVector.fromArray(SHORTS, b, i).convertShape(VectorOperators.S2I, INTS, 0);
            IntVector xMagnitude = xs.and(0x7FFF);
            IntVector yMagnitude = ys.and(0x7FFF);
            IntVector xMoved = xMagnitude.lanewise(VectorOperators.LSHL, 13).add(0x38000000);
            IntVector yMoved = yMagnitude.lanewise(VectorOperators.LSHL, 13).add(0x38000000);
            xMoved = xMoved.add(ZERO.blend(INF_NAN_EXPONENT, xMagnitude.compare(VectorOperators.GE, MIN_INF)));
            yMoved = yMoved.add(ZERO.blend(INF_NAN_EXPONENT, yMagnitude.compare(VectorOperators.GE, MIN_INF)));
            IntVector xSmall = xMagnitude.or(TWO_TO_23).reinterpretAsFloats().sub(0x1p23f).mul(0x1p-24f)
                    .reinterpretAsInts();
            IntVector ySmall = yMagnitude.or(TWO_TO_23).reinterpretAsFloats().sub(0x1p23f).mul(0x1p-24f)
                    .reinterpretAsInts();
            FloatVector x = xMoved.blend(xSmall, xMagnitude.compare(VectorOperators.LT, 0x400))
                    .or(xs.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats();
            FloatVector y = yMoved.blend(ySmall, yMagnitude.compare(VectorOperators.LT, 0x400))
                    .or(ys.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats();
            FloatVector values;
            switch (kernel) {
                case ADD -> values = x.add(y);
                case ADD_AND_DIVIDE -> values = x.add(y).div(by);
                case DIVIDE -> values = x.div(by);
                case MULTIPLY -> values = x.mul(y);
                case MINIMUM -> values = x.min(y);
                case MAXIMUM -> values = x.max(y);
                default -> throw new IllegalArgumentException("unknown kernel " + kernel);
            }
            IntVector bits = values.reinterpretAsInts();
            IntVector magnitude = bits.and(0x7FFFFFFF);
            IntVector mantissaTop = magnitude.lanewise(VectorOperators.LSHR, 13);
            IntVector normal = magnitude.add(0xFFF - 0x38000000).add(mantissaTop.and(1))
                    .lanewise(VectorOperators.LSHR, 13);
            IntVector subnormal = magnitude.reinterpretAsFloats().add(0.5f).reinterpretAsInts().sub(0x3F000000);
            VectorMask<Integer> nan = magnitude.compare(VectorOperators.GT, 0x7F800000);
            IntVector tooLarge = IntVector.broadcast(INTS, 0x7C00).blend(mantissaTop.and(0x3FF).or(0x7E00), nan);
            IntVector out = normal.blend(subnormal, magnitude.compare(VectorOperators.LT, MIN_NORMAL_HALF))
                    .blend(tooLarge, magnitude.compare(VectorOperators.GE, 0x477FF000))
                    .or(bits.lanewise(VectorOperators.LSHR, 16).and(0x8000));
            ((ShortVector) out.convertShape(VectorOperators.I2S, SHORTS, 0)).intoArray(a, i);
        }
    }

    /**
     * BFLOAT16 over {@code bound} elements, a multiple of the lanes: the top half of a float32,
     * rounded back as {@link HalfFloats#floatToBfloat16} (nearest even, a NaN quieted).
     */
    private static void bfloats(int kernel, short[] a, short[] b, int bound, int divisor) {
        int lanes = INTS.length();
        float by = divisor;
        boolean unary = kernel == DIVIDE;
        for (int i = 0; i < bound; i += lanes) {
            FloatVector x = ((IntVector) ShortVector.fromArray(SHORTS, a, i).convertShape(VectorOperators.S2I, INTS, 0))
                    .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
            FloatVector y = unary ? x
                    : ((IntVector) ShortVector.fromArray(SHORTS, b, i).convertShape(VectorOperators.S2I, INTS, 0))
                            .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
            FloatVector values;
            switch (kernel) {
                case ADD -> values = x.add(y);
                case ADD_AND_DIVIDE -> values = x.add(y).div(by);
                case DIVIDE -> values = x.div(by);
                case MULTIPLY -> values = x.mul(y);
                case MINIMUM -> values = x.min(y);
                case MAXIMUM -> values = x.max(y);
                default -> throw new IllegalArgumentException("unknown kernel " + kernel);
            }
            IntVector bits = values.reinterpretAsInts();
            IntVector top = bits.lanewise(VectorOperators.LSHR, 16);
            IntVector rounded = bits.add(0x7FFF).add(top.and(1)).lanewise(VectorOperators.LSHR, 16);
            VectorMask<Integer> nan = bits.and(0x7FFFFFFF).compare(VectorOperators.GT, 0x7F800000);
            ((ShortVector) rounded.blend(top.or(0x40), nan).convertShape(VectorOperators.I2S, SHORTS, 0))
                    .intoArray(a, i);
        }
    }
}
