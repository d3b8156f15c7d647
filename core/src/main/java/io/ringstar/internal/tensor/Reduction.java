package io.ringstar.internal.tensor;

import io.ringstar.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;

/**
 * The element-wise kernels of the collectives, over little-endian buffers at absolute byte
 * offsets, for every {@link ReduceOp} and every {@link ElementType}. Buffers may be direct or
 * heap, and the source read-only; no kernel changes a buffer's position, limit or mark (callers
 * share buffers), and a call allocates nothing. The destination and source regions of one call
 * must be the same or must not overlap.
 *
 * <p>Why blocks: C2 vectorizes an element-wise loop only over arrays that both operands index
 * alike from element 0, since otherwise it cannot rule out that they overlap. Measured on JDK 17
 * and JDK 25 alike, it leaves scalar every loop of {@code Unsafe} reads of raw addresses or of
 * arrays at an offset, and of {@link ByteBuffer} reads; so does JDK 25 with {@code MemorySegment}
 * reads, and the incubating Vector API's {@code fromByteBuffer} is slower still on JDK 17. So
 * each kernel copies a block of the destination and of the source into per-thread arrays with
 * {@code Unsafe.copyMemory} (an intrinsic memcpy, which reads heap, read-only and direct buffers
 * alike through their {@code hb} array and {@code address}), computes there vectorized, and
 * copies the block back; the blocks stay in the L1 cache between those passes
 * ({@link BlockReduction}; the loops: {@link FloatKernels}, {@link IntegerKernels} and, widening
 * to float32 and back, {@link HalfKernels}, or {@link VectorHalfKernels} where the JVM was started
 * with {@code --add-modules jdk.incubator.vector}: HALF and BFLOAT16 about twice as fast on
 * JDK 17, with the same bits; a JVM without the module never loads that class).
 * {@code ReductionBenchmark} compares the kernels with a plain copy of the same bytes.
 *
 * <p>Results: FLOAT and DOUBLE round each operation as Java does. HALF and BFLOAT16 are widened
 * exactly to float32, combined (and divided) there, and rounded to their type once, to nearest
 * even ({@link HalfFloats}). MIN and MAX are {@code Math.min} and {@code Math.max}: a NaN wins,
 * and -0 is below +0; where both operands are NaN, the result is one of them, quieted, and which
 * one Java leaves to the JIT (C2 swaps the operands of a sum or product as it likes). INT and
 * LONG sums and products wrap around. Error bound: a SUM of n
 * contributions reduced by n - 1 calls, each rounding its result once (as the ring does hop by
 * hop), is within {@code n * u * (|x_1| + ... + |x_n|)} of the exact sum, where u, the unit
 * roundoff of the type, is 2^-11 for HALF, 2^-8 for BFLOAT16, 2^-24 for FLOAT and 2^-53 for
 * DOUBLE, as long as no partial sum overflows (past 65504 for HALF); an AVG, whose last call
 * divides by n, is within that bound divided by n (plus half the type's smallest subnormal, where
 * the average is that small). For 8 values of one sign that is a relative error of at most
 * 8 * 2^-11, about 0.4 %, for HALF and 8 * 2^-8, about 3 %, for BFLOAT16; where values cancel,
 * the error is relative to the sum of their magnitudes instead.
 *
 * <p>{@code sun.misc.Unsafe} is in the {@code jdk.unsupported} module, which class-path
 * applications read without any flag. Where it or the JDK fields relied on are missing or mean
 * something else, or on a big-endian machine, the kernels fall back to scalar loops through a
 * little-endian duplicate of each buffer ({@link ScalarReduction}): the same results in every bit
 * (but for which of two NaNs), slower, and a few objects a call.
 */
public final class Reduction {
    static final int ADD = 0;
    static final int ADD_AND_DIVIDE = 1;
    static final int DIVIDE = 2;
    static final int MULTIPLY = 3;
    static final int MINIMUM = 4;
    static final int MAXIMUM = 5;

    /** Whether the block kernels are used, rather than the scalar fallback. */
    static final boolean ACCELERATED = BlockReduction.AVAILABLE;

    private Reduction() {
    }

    /** {@code dst[i] += src[i]} for {@code count} elements of {@code type}, read and written little-endian. */
    public static void add(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        apply(ADD, type, dst, dstOffset, dst, dstOffset, src, srcOffset, count, 1, ACCELERATED);
    }

    /**
     * {@code dst[i] = (dst[i] + src[i]) / divisor} in one pass over the memory. For FLOAT and
     * DOUBLE the same result in every bit as {@link #add} followed by {@link #divide}: the sum is
     * rounded to the type, then the quotient. HALF and BFLOAT16 are rounded once, from float32, as
     * by {@link #combine}, so they may differ from that in the last bit.
     *
     * @throws IllegalArgumentException for a divisor other than 1 and an integer type
     */
    public static void addAndDivide(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
            int count, int divisor) {
        apply(divisor == 1 ? ADD : ADD_AND_DIVIDE, type, dst, dstOffset, dst, dstOffset, src, srcOffset, count, divisor,
                ACCELERATED);
    }

    /**
     * {@code dst[i] = (a[i] + b[i]) / divisor} (no division for a divisor of 1): {@link #addAndDivide}
     * out of place, so that a sum can be written where it belongs without first copying one operand
     * there. {@code a} may be {@code dst} itself at the same offset; otherwise no region may overlap
     * another. Same bits as copying {@code a} to {@code dst} and then {@link #addAndDivide}.
     */
    public static void sumAndDivide(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer a, int aOffset,
            ByteBuffer b, int bOffset, int count, int divisor) {
        apply(divisor == 1 ? ADD : ADD_AND_DIVIDE, type, dst, dstOffset, a, aOffset, b, bOffset, count, divisor,
                ACCELERATED);
    }

    /**
     * {@code buffer[i] /= divisor} for {@code count} elements of a floating-point {@code type}
     * (HALF and BFLOAT16 divided in float32 and rounded once); a divisor of 1 leaves the bits as
     * they are, of any type.
     *
     * @throws IllegalArgumentException for a divisor other than 1 and an integer type
     */
    public static void divide(ElementType type, ByteBuffer buffer, int offset, int count, int divisor) {
        if (divisor == 1) {
            checkRegion(type, buffer, offset, count);
            return;
        }
        apply(DIVIDE, type, buffer, offset, buffer, offset, null, 0, count, divisor, ACCELERATED);
    }

    /**
     * {@code dst[i] = (a[i] op b[i]) / divisor} for {@code count} elements of {@code type}: the
     * kernel of every reducing collective. {@link ReduceOp#AVG} combines as {@link ReduceOp#SUM};
     * the divisor, which only SUM and AVG of a floating-point type may take, makes the average, in
     * the same pass and rounded once (a divisor of 1 divides nothing). HALF and BFLOAT16 are
     * combined and divided in float32 and rounded to their type once. Integer sums and products
     * wrap around. {@code a} may be {@code dst} itself at the same offset; otherwise no region may
     * overlap another.
     *
     * @throws IllegalArgumentException for a divisor other than 1 with another op or an integer type
     */
    public static void combine(ReduceOp op, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer a,
            int aOffset, ByteBuffer b, int bOffset, int count, int divisor) {
        int kernel = kernel(op, type, divisor);
        apply(kernel, type, dst, dstOffset, a, aOffset, b, bOffset, count, divisor, ACCELERATED);
    }

    /** The kernel of {@code op}; checks the divisor. */
    static int kernel(ReduceOp op, ElementType type, int divisor) {
        boolean sum = op == ReduceOp.SUM || op == ReduceOp.AVG;
        if (divisor != 1 && (!sum || !type.isFloatingPoint() || divisor < 1)) {
            throw new IllegalArgumentException("cannot divide a " + op + " of " + type + " by " + divisor);
        }
        switch (op) {
            case SUM:
            case AVG:
                return divisor == 1 ? ADD : ADD_AND_DIVIDE;
            case PROD:
                return MULTIPLY;
            case MIN:
                return MINIMUM;
            case MAX:
                return MAXIMUM;
            default:
                throw new IllegalArgumentException("unknown reduce op " + op);
        }
    }

    /** Copies {@code length} bytes; the reference the kernels are measured against. */
    public static void copy(ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int length) {
        dst.put(dstOffset, src, srcOffset, length);
    }

    /** {@code dst = first (op) src}, where {@code first} is usually {@code dst} itself. */
    static void apply(int kernel, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer first,
            int firstOffset, ByteBuffer src, int srcOffset, int count, int divisor, boolean accelerated) {
        apply(kernel, type, dst, dstOffset, first, firstOffset, src, srcOffset, count, divisor, accelerated,
                BlockReduction.VECTORS);
    }

    /**
     * {@link #apply} choosing the path: the scalar fallback, or the block kernels with or without
     * {@link VectorHalfKernels} ({@code vectors} true only where {@link BlockReduction#VECTORS} is).
     */
    static void apply(int kernel, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer first,
            int firstOffset, ByteBuffer src, int srcOffset, int count, int divisor, boolean accelerated,
            boolean vectors) {
        long bytes = checkRegion(type, dst, dstOffset, count);
        if (first != dst || firstOffset != dstOffset) {
            checkRegion(type, first, firstOffset, count);
        }
        if (src != null) {
            checkRegion(type, src, srcOffset, count);
        }
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        if ((kernel == ADD_AND_DIVIDE || kernel == DIVIDE) && !type.isFloatingPoint()) {
            throw new IllegalArgumentException("cannot divide " + type + " values by " + divisor);
        }
        if (count == 0) {
            return;
        }
        if (accelerated) {
            BlockReduction.apply(kernel, type, dst, dstOffset, first, firstOffset, src, srcOffset, (int) bytes,
                    divisor, vectors);
        } else {
            ScalarReduction.apply(kernel, type, dst, dstOffset, first, firstOffset, src, srcOffset, count, divisor);
        }
    }

    /** Checks that {@code count} elements fit in the buffer's capacity from {@code offset}; returns their bytes. */
    private static long checkRegion(ElementType type, ByteBuffer buffer, int offset, int count) {
        Objects.requireNonNull(buffer, "buffer");
        long bytes = (long) count * type.bytes();
        Objects.checkFromIndexSize(offset, bytes, (long) buffer.capacity());
        return bytes;
    }
}
