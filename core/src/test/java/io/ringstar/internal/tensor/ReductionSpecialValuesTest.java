package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.ReductionCases.getBits;
import static io.ringstar.internal.tensor.ReductionCases.putBits;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.internal.tensor.ReductionCases.Kernel;
import io.ringstar.internal.tensor.ReductionCases.Memory;
import io.ringstar.internal.tensor.ReductionCases.Path;
import java.nio.ByteBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every kernel on every pair of a type's special values (zeros, subnormals, the extremes,
 * infinities, NaNs with payloads, values whose products overflow or tie), and HALF and BFLOAT16
 * on all 65 536 bit patterns: the accelerated and scalar paths give the same bits, which are the
 * closed form's (so each other's; where both operands are NaN, see {@link #check}).
 */
class ReductionSpecialValuesTest {

    private static long[] specials(ElementType type) {
        return switch (type) {
            case FLOAT -> floatBits(0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, 3 * Float.MIN_VALUE,
                    Float.MIN_NORMAL, -Float.MIN_NORMAL, 1f, -1f, 0.5f, 1.5f, -2.5f, 3f, 1e30f, -1e-30f,
                    Float.MAX_VALUE, -Float.MAX_VALUE,
                    Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.intBitsToFloat(0x7FC00000),
                    Float.intBitsToFloat(0x7FC12345), Float.intBitsToFloat(0xFFC00001),
                    Float.intBitsToFloat(0x7F800001));
            case DOUBLE -> doubleBits(0d, -0d, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, 1d, -1d, 0.5,
                    1.5, -2.5, 3d, 1e300, -1e-300, Double.MAX_VALUE, -Double.MAX_VALUE, Double.POSITIVE_INFINITY,
                    Double.NEGATIVE_INFINITY, Double.longBitsToDouble(0x7FF8000000000000L),
                    Double.longBitsToDouble(0x7FF8000012345678L), Double.longBitsToDouble(0xFFF8000000000001L),
                    Double.longBitsToDouble(0x7FF0000000000001L));
            // Zeros, subnormals (1, 3, the largest), the smallest normal, 0.5, 1, 1.5, -2.5, 255.875,
            // 32768 (sums overflow), 65504 and its negative, infinities, NaNs quiet and signalling with payloads.
            case HALF -> new long[] {0x0000, 0x8000, 0x0001, 0x8001, 0x0003, 0x03FF, 0x83FF, 0x0400, 0x3800, 0x3C00,
                0xBC00, 0x3E00, 0xC100, 0x5BFF, 0x7800, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7E2A, 0xFE01,
                0x7C01, 0x7D55};
            case BFLOAT16 -> new long[] {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F00, 0x3F80, 0xBF80,
                0x3FC0, 0xC020, 0x4040, 0x7F00, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x7FD5, 0xFFC1, 0x7F81};
            case INT -> new long[] {0, 1, -1, 2, 3, Integer.MAX_VALUE, Integer.MIN_VALUE, Integer.MIN_VALUE + 1,
                0x10000, 0x7FFF0000, -99999, 46341};
            case LONG -> new long[] {0, 1, -1, 2, 3, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1, 1L << 32,
                0x7FFFFFFF00000000L, -99999, 3037000500L};
        };
    }

    private static long[] floatBits(float... values) {
        long[] bits = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float.floatToRawIntBits(values[i]) & 0xFFFF_FFFFL;
        }
        return bits;
    }

    private static long[] doubleBits(double... values) {
        long[] bits = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Double.doubleToRawLongBits(values[i]);
        }
        return bits;
    }

    @ParameterizedTest
    @EnumSource(ElementType.class)
    void everyPairOfSpecialValues(ElementType type) {
        long[] values = specials(type);
        int count = values.length * values.length;
        long[] a = new long[count];
        long[] b = new long[count];
        for (int i = 0; i < count; i++) {
            a[i] = values[i / values.length];
            b[i] = values[i % values.length];
        }
        for (Kernel kernel : Kernel.of(type)) {
            check(type, kernel, a, b, kernel + " of " + type + " special values");
        }
    }

    @ParameterizedTest
    @EnumSource(value = ElementType.class, names = {"HALF", "BFLOAT16"})
    void everySixteenBitPattern(ElementType type) {
        int count = 1 << 16;
        long[] a = new long[count];
        long[] b = new long[count];
        for (int i = 0; i < count; i++) {
            a[i] = i;
            b[i] = (i * 40503L + 12345) & 0xFFFF; // an odd multiplier: every pattern once, in another order
        }
        for (Kernel kernel : Kernel.of(type)) {
            check(type, kernel, a, b, kernel + " of every " + type);
        }
    }

    /**
     * {@code kernel(a, b)} on both paths, in place in a direct and a heap buffer: the closed form, bit
     * for bit. Where both operands are NaN, Java does not say which NaN an operation returns, and C2
     * swaps the operands of an addition or a product as it likes: the result must be one of the two
     * NaNs as the kernel returns it alone ({@code kernel(a, a)} or {@code kernel(b, b)}).
     */
    private static void check(ElementType type, Kernel kernel, long[] a, long[] b, String context) {
        int size = type.bytes();
        int count = a.length;
        for (Path path : Path.of(type)) {
            ByteBuffer dst = (path != Path.SCALAR ? Memory.DIRECT_SLICE : Memory.HEAP).allocate(count * size);
            ByteBuffer src = Memory.HEAP_SLICE.allocate(count * size);
            for (int i = 0; i < count; i++) {
                putBits(dst, i * size, size, a[i]);
                putBits(src, i * size, size, b[i]);
            }
            kernel.run(path, type, dst, 0, src.asReadOnlyBuffer(), 0, count);
            for (int i = 0; i < count; i++) {
                long actual = getBits(dst, i * size, size);
                String element = path + " element " + i + " (" + Long.toHexString(a[i]) + ", "
                        + Long.toHexString(b[i]) + "): " + context;
                if (kernel.op() != null && isNaN(type, a[i]) && isNaN(type, b[i])) {
                    long first = kernel.expectedBits(type, a[i], a[i]) & mask(size);
                    long second = kernel.expectedBits(type, b[i], b[i]) & mask(size);
                    assertTrue(actual == first || actual == second, Long.toHexString(actual) + " is neither "
                            + Long.toHexString(first) + " nor " + Long.toHexString(second) + ": " + element);
                } else {
                    assertEquals(Long.toHexString(kernel.expectedBits(type, a[i], b[i]) & mask(size)),
                            Long.toHexString(actual), element);
                }
            }
        }
    }

    private static long mask(int bytes) {
        return bytes == 8 ? -1L : (1L << (8 * bytes)) - 1;
    }

    private static boolean isNaN(ElementType type, long bits) {
        return switch (type) {
            case FLOAT -> Float.isNaN(Float.intBitsToFloat((int) bits));
            case DOUBLE -> Double.isNaN(Double.longBitsToDouble(bits));
            case HALF -> (bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0;
            case BFLOAT16 -> (bits & 0x7F80) == 0x7F80 && (bits & 0x7F) != 0;
            default -> false;
        };
    }
}
