package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.Reduction.ADD;
import static io.ringstar.internal.tensor.Reduction.ADD_AND_DIVIDE;
import static io.ringstar.internal.tensor.Reduction.DIVIDE;
import static io.ringstar.internal.tensor.Reduction.MAXIMUM;
import static io.ringstar.internal.tensor.Reduction.MINIMUM;
import static io.ringstar.internal.tensor.Reduction.MULTIPLY;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The fallback of {@link Reduction}, used where its block kernels cannot be (no usable
 * {@code Unsafe}, a big-endian machine): absolute reads and writes through a little-endian
 * duplicate of each buffer (whatever the buffer's own {@link ByteBuffer#order()}), scalar, with
 * the same results. Owned by {@link Reduction}, which checks the regions and calls
 * {@link #apply} (the tests reach it on every JVM through {@code Reduction.apply}).
 */
final class ScalarReduction {
    private ScalarReduction() {
    }

    static void apply(int kernel, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer first,
            int firstOffset, ByteBuffer src, int srcOffset, int count, int divisor) {
        // The duplicates' limit is the capacity, which is what the regions were checked against.
        ByteBuffer d = dst.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer f = first.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer s = src == null ? null : src.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        int size = type.bytes();
        for (int i = 0; i < count; i++) {
            int at = dstOffset + size * i;
            int a = firstOffset + size * i;
            int b = srcOffset + size * i;
            switch (type) {
                case FLOAT:
                    d.putFloat(at, floats(kernel, f.getFloat(a), s == null ? 0f : s.getFloat(b), divisor));
                    break;
                case DOUBLE:
                    d.putDouble(at, doubles(kernel, f.getDouble(a), s == null ? 0d : s.getDouble(b), divisor));
                    break;
                case HALF:
                    d.putShort(at, HalfFloats.floatToHalf(floats(kernel, HalfFloats.halfToFloat(f.getShort(a)),
                            s == null ? 0f : HalfFloats.halfToFloat(s.getShort(b)), divisor)));
                    break;
                case BFLOAT16:
                    d.putShort(at, HalfFloats.floatToBfloat16(floats(kernel,
                            HalfFloats.bfloat16ToFloat(f.getShort(a)),
                            s == null ? 0f : HalfFloats.bfloat16ToFloat(s.getShort(b)), divisor)));
                    break;
                case INT:
                    d.putInt(at, (int) longs(kernel, f.getInt(a), s == null ? 0 : s.getInt(b)));
                    break;
                case LONG:
                    d.putLong(at, longs(kernel, f.getLong(a), s == null ? 0 : s.getLong(b)));
                    break;
                default:
                    throw new IllegalArgumentException("no kernel for " + type);
            }
        }
    }

    /** One element of a kernel in float32; {@code b} is unused by DIVIDE. */
    static float floats(int kernel, float a, float b, int divisor) {
        switch (kernel) {
            case ADD:
                return a + b;
            case ADD_AND_DIVIDE:
                return (a + b) / divisor;
            case DIVIDE:
                return a / divisor;
            case MULTIPLY:
                return a * b;
            case MINIMUM:
                return Math.min(a, b);
            case MAXIMUM:
                return Math.max(a, b);
            default:
                throw new IllegalArgumentException("unknown kernel " + kernel);
        }
    }

    static double doubles(int kernel, double a, double b, int divisor) {
        switch (kernel) {
            case ADD:
                return a + b;
            case ADD_AND_DIVIDE:
                return (a + b) / divisor;
            case DIVIDE:
                return a / divisor;
            case MULTIPLY:
                return a * b;
            case MINIMUM:
                return Math.min(a, b);
            case MAXIMUM:
                return Math.max(a, b);
            default:
                throw new IllegalArgumentException("unknown kernel " + kernel);
        }
    }

    /** Integers, which wrap around; an INT's result is the low 32 bits, as Java's int arithmetic gives. */
    static long longs(int kernel, long a, long b) {
        switch (kernel) {
            case ADD:
                return a + b;
            case MULTIPLY:
                return a * b;
            case MINIMUM:
                return Math.min(a, b);
            case MAXIMUM:
                return Math.max(a, b);
            default:
                throw new IllegalArgumentException("integers cannot be divided (kernel " + kernel + ")");
        }
    }
}
