package io.ringstar.tensor;

import java.nio.ByteBuffer;

/**
 * The element-wise kernels of the collectives, over little-endian buffers at absolute byte
 * offsets. Written as plain indexed loops over native-order buffers, which C2 compiles to vector
 * instructions; the JMH benchmark {@code ReductionBenchmark} compares them with a plain copy.
 */
public final class Reduction {
    private Reduction() {
    }

    /** {@code dst[i] += src[i]} for {@code count} elements of {@code type}. Buffers must be little-endian. */
    public static void add(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        if (type == ElementType.FLOAT) {
            addFloats(dst, dstOffset, src, srcOffset, count);
        } else {
            addDoubles(dst, dstOffset, src, srcOffset, count);
        }
    }

    /** {@code buffer[i] /= divisor} for {@code count} elements of {@code type}. */
    public static void divide(ElementType type, ByteBuffer buffer, int offset, int count, int divisor) {
        if (divisor == 1) {
            return;
        }
        if (type == ElementType.FLOAT) {
            float d = divisor;
            for (int i = 0, at = offset; i < count; i++, at += Float.BYTES) {
                buffer.putFloat(at, buffer.getFloat(at) / d);
            }
        } else {
            double d = divisor;
            for (int i = 0, at = offset; i < count; i++, at += Double.BYTES) {
                buffer.putDouble(at, buffer.getDouble(at) / d);
            }
        }
    }

    /** Copies {@code length} bytes; the reference the kernels are measured against. */
    public static void copy(ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int length) {
        dst.put(dstOffset, src, srcOffset, length);
    }

    private static void addFloats(ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        for (int i = 0; i < count; i++) {
            int d = dstOffset + i * Float.BYTES;
            dst.putFloat(d, dst.getFloat(d) + src.getFloat(srcOffset + i * Float.BYTES));
        }
    }

    private static void addDoubles(ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        for (int i = 0; i < count; i++) {
            int d = dstOffset + i * Double.BYTES;
            dst.putDouble(d, dst.getDouble(d) + src.getDouble(srcOffset + i * Double.BYTES));
        }
    }
}
