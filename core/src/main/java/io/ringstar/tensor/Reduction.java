package io.ringstar.tensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;

/**
 * The element-wise kernels of the collectives, over little-endian buffers at absolute byte
 * offsets.
 *
 * <p>Why blocks: on JDK 17, C2 does not vectorize an indexed loop over a direct
 * {@link ByteBuffer} (nor over raw addresses), but it does vectorize a loop over two heap arrays.
 * So each kernel moves a block of a few KiB into heap arrays with bulk (memcpy) transfers,
 * computes there, and moves the block back; the blocks stay in the L1 cache. The JMH benchmark
 * {@code ReductionBenchmark} compares the kernels with a plain copy of the same bytes.
 *
 * <p>Each thread has its own scratch arrays, so concurrent ranks in one JVM do not share them.
 */
public final class Reduction {
    /** Elements per block: two float blocks and two double blocks fit a 64 KiB L1/L2 comfortably. */
    static final int BLOCK = 2048;

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Reduction() {
    }

    /** {@code dst[i] += src[i]} for {@code count} elements of {@code type}. Buffers must be little-endian. */
    public static void add(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        Scratch scratch = SCRATCH.get();
        if (type == ElementType.FLOAT) {
            FloatBuffer d = floats(dst, dstOffset, count);
            FloatBuffer s = floats(src, srcOffset, count);
            float[] a = scratch.floatsA;
            float[] b = scratch.floatsB;
            for (int base = 0; base < count; base += BLOCK) {
                int length = Math.min(BLOCK, count - base);
                d.get(base, a, 0, length);
                s.get(base, b, 0, length);
                for (int i = 0; i < length; i++) {
                    a[i] += b[i];
                }
                d.put(base, a, 0, length);
            }
        } else {
            DoubleBuffer d = doubles(dst, dstOffset, count);
            DoubleBuffer s = doubles(src, srcOffset, count);
            double[] a = scratch.doublesA;
            double[] b = scratch.doublesB;
            for (int base = 0; base < count; base += BLOCK) {
                int length = Math.min(BLOCK, count - base);
                d.get(base, a, 0, length);
                s.get(base, b, 0, length);
                for (int i = 0; i < length; i++) {
                    a[i] += b[i];
                }
                d.put(base, a, 0, length);
            }
        }
    }

    /** {@code buffer[i] /= divisor} for {@code count} elements of {@code type}. */
    public static void divide(ElementType type, ByteBuffer buffer, int offset, int count, int divisor) {
        if (divisor == 1 || count == 0) {
            return;
        }
        Scratch scratch = SCRATCH.get();
        if (type == ElementType.FLOAT) {
            FloatBuffer d = floats(buffer, offset, count);
            float[] a = scratch.floatsA;
            float by = divisor;
            for (int base = 0; base < count; base += BLOCK) {
                int length = Math.min(BLOCK, count - base);
                d.get(base, a, 0, length);
                for (int i = 0; i < length; i++) {
                    a[i] /= by;
                }
                d.put(base, a, 0, length);
            }
        } else {
            DoubleBuffer d = doubles(buffer, offset, count);
            double[] a = scratch.doublesA;
            double by = divisor;
            for (int base = 0; base < count; base += BLOCK) {
                int length = Math.min(BLOCK, count - base);
                d.get(base, a, 0, length);
                for (int i = 0; i < length; i++) {
                    a[i] /= by;
                }
                d.put(base, a, 0, length);
            }
        }
    }

    /**
     * {@code dst[i] = (dst[i] + src[i]) / divisor} for {@code count} elements; bit-identical to
     * {@link #add} then {@link #divide}.
     */
    public static void addAndDivide(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
            int count, int divisor) {
        add(type, dst, dstOffset, src, srcOffset, count);
        divide(type, dst, dstOffset, count, divisor);
    }

    /** Copies {@code length} bytes; the reference the kernels are measured against. */
    public static void copy(ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int length) {
        dst.put(dstOffset, src, srcOffset, length);
    }

    private static FloatBuffer floats(ByteBuffer buffer, int byteOffset, int count) {
        return buffer.duplicate().limit(byteOffset + count * Float.BYTES).position(byteOffset).slice()
                .order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    }

    private static DoubleBuffer doubles(ByteBuffer buffer, int byteOffset, int count) {
        return buffer.duplicate().limit(byteOffset + count * Double.BYTES).position(byteOffset).slice()
                .order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer();
    }

    /** One thread's blocks. */
    private static final class Scratch {
        final float[] floatsA = new float[BLOCK];
        final float[] floatsB = new float[BLOCK];
        final double[] doublesA = new double[BLOCK];
        final double[] doublesB = new double[BLOCK];
    }
}
