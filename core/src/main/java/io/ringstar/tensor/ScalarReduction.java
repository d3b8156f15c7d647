package io.ringstar.tensor;

import static io.ringstar.tensor.Reduction.ADD;
import static io.ringstar.tensor.Reduction.ADD_AND_DIVIDE;
import static io.ringstar.tensor.Reduction.DIVIDE;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The fallback of {@link Reduction}, used where its block kernels cannot be (no usable
 * {@code Unsafe}, a big-endian machine): absolute reads and writes through a little-endian
 * duplicate of each buffer (whatever the buffer's own {@link ByteBuffer#order()}), scalar, with
 * the same results. Owned by {@link Reduction}, which checks the regions and calls
 * {@link #apply}; the other methods are entries for the tests, so they run it on every JVM.
 */
final class ScalarReduction {
    private ScalarReduction() {
    }

    static void add(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        Reduction.apply(ADD, type, dst, dstOffset, dst, dstOffset, src, srcOffset, count, 1, false);
    }

    static void addAndDivide(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
            int count, int divisor) {
        Reduction.apply(divisor == 1 ? ADD : ADD_AND_DIVIDE, type, dst, dstOffset, dst, dstOffset, src, srcOffset,
                count, divisor, false);
    }

    static void sumAndDivide(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer a, int aOffset,
            ByteBuffer b, int bOffset, int count, int divisor) {
        Reduction.apply(divisor == 1 ? ADD : ADD_AND_DIVIDE, type, dst, dstOffset, a, aOffset, b, bOffset, count,
                divisor, false);
    }

    static void divide(ElementType type, ByteBuffer buffer, int offset, int count, int divisor) {
        if (divisor != 1) {
            Reduction.apply(DIVIDE, type, buffer, offset, buffer, offset, null, 0, count, divisor, false);
        }
    }

    static void apply(int kernel, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer first,
            int firstOffset, ByteBuffer src, int srcOffset, int count, int divisor) {
        // The duplicates' limit is the capacity, which is what the regions were checked against.
        ByteBuffer d = dst.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer f = first.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer s = src == null ? null : src.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        if (type == ElementType.FLOAT) {
            float by = divisor;
            for (int i = 0; i < count; i++) {
                int at = dstOffset + 4 * i;
                float value = f.getFloat(firstOffset + 4 * i);
                if (kernel != DIVIDE) {
                    value += s.getFloat(srcOffset + 4 * i);
                }
                if (kernel != ADD) {
                    value /= by;
                }
                d.putFloat(at, value);
            }
        } else {
            double by = divisor;
            for (int i = 0; i < count; i++) {
                int at = dstOffset + 8 * i;
                double value = f.getDouble(firstOffset + 8 * i);
                if (kernel != DIVIDE) {
                    value += s.getDouble(srcOffset + 8 * i);
                }
                if (kernel != ADD) {
                    value /= by;
                }
                d.putDouble(at, value);
            }
        }
    }
}
