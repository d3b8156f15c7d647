package io.ringstar.tensor;

import io.ringstar.ReduceOp;
import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;

/**
 * The element-wise kernels of the collectives, over little-endian buffers at absolute byte
 * offsets. Buffers may be direct or heap, and the source read-only; no kernel changes a buffer's
 * position, limit or mark (callers share buffers), and a call allocates nothing. The destination
 * and source regions of one call must be the same or must not overlap.
 *
 * <p>Why blocks: C2 vectorizes an element-wise loop only over arrays that both operands index
 * alike from element 0, since otherwise it cannot rule out that they overlap. Measured on JDK 17
 * and JDK 25 alike, it leaves scalar every loop of {@code Unsafe} reads of raw addresses or of
 * arrays at an offset, and of {@link ByteBuffer} reads; so does JDK 25 with {@code MemorySegment}
 * reads, and the incubating Vector API's {@code fromByteBuffer} is slower still on JDK 17. So
 * each kernel copies a block of the destination and of the source into per-thread arrays with
 * {@code Unsafe.copyMemory} (an intrinsic memcpy, which reads heap, read-only and direct buffers
 * alike through their {@code hb} array and {@code address}), computes there vectorized, and
 * copies the block back; the blocks stay in the L1 cache between those passes.
 * {@code ReductionBenchmark} compares the kernels with a plain copy of the same bytes.
 *
 * <p>{@code sun.misc.Unsafe} is in the {@code jdk.unsupported} module, which class-path
 * applications read without any flag. Where it or the JDK fields relied on are missing or mean
 * something else, or on a big-endian machine, the kernels fall back to scalar loops through a
 * little-endian duplicate of each buffer ({@link ScalarReduction}): the same results, slower, and
 * a few objects a call.
 */
public final class Reduction {
    /**
     * Bytes per block: of 4, 8, 16 and 32 KiB, 8 KiB measured best at 1 and 64 MiB (by about a
     * tenth over 4 KiB); the two blocks of a call then take half of a 32 KiB L1 cache.
     */
    static final int BLOCK_BYTES = 8192;

    static final int ADD = 0;
    static final int ADD_AND_DIVIDE = 1;
    static final int DIVIDE = 2;
    static final int MULTIPLY = 3;
    static final int MINIMUM = 4;
    static final int MAXIMUM = 5;

    private static final sun.misc.Unsafe UNSAFE;
    /** Offsets of {@code Buffer.address} and {@code ByteBuffer.hb}, or -1 when unusable. */
    private static final long ADDRESS_FIELD;
    private static final long ARRAY_FIELD;
    private static final long FLOAT_BASE;
    private static final long DOUBLE_BASE;

    /** Whether the block kernels are used, rather than the scalar fallback. */
    static final boolean ACCELERATED;

    static {
        sun.misc.Unsafe unsafe = null;
        long address = -1;
        long array = -1;
        long base = 0;
        long floatBase = 0;
        long doubleBase = 0;
        boolean accelerated = false;
        try {
            Field field = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            unsafe = (sun.misc.Unsafe) field.get(null);
            address = unsafe.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            array = unsafe.objectFieldOffset(ByteBuffer.class.getDeclaredField("hb"));
            base = unsafe.arrayBaseOffset(byte[].class);
            floatBase = unsafe.arrayBaseOffset(float[].class);
            doubleBase = unsafe.arrayBaseOffset(double[].class);
            accelerated = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN
                    && layoutAsExpected(unsafe, address, array, base);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            accelerated = false;
        }
        UNSAFE = accelerated ? unsafe : null;
        ADDRESS_FIELD = address;
        ARRAY_FIELD = array;
        FLOAT_BASE = floatBase;
        DOUBLE_BASE = doubleBase;
        ACCELERATED = accelerated;
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Reduction() {
    }

    /** {@code dst[i] += src[i]} for {@code count} elements of {@code type}, read and written little-endian. */
    public static void add(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        apply(ADD, type, dst, dstOffset, dst, dstOffset, src, srcOffset, count, 1, ACCELERATED);
    }

    /**
     * {@code dst[i] = (dst[i] + src[i]) / divisor} in one pass over the memory, with the same
     * result in every bit as {@link #add} followed by {@link #divide}: the sum is rounded to the
     * type, then the quotient.
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
     * {@code buffer[i] /= divisor} for {@code count} elements of {@code type}; a divisor of 1 leaves
     * the bits as they are.
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

    private static int kernel(ReduceOp op, ElementType type, int divisor) {
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
        if (count == 0) {
            return;
        }
        if (accelerated && hasBlockKernel(kernel, type)) {
            accelerated(kernel, type, dst, dstOffset, first, firstOffset, src, srcOffset, (int) bytes, divisor);
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

    /** Whether the block kernels below cover this kernel and type; the others run scalar. */
    private static boolean hasBlockKernel(int kernel, ElementType type) {
        return kernel <= DIVIDE && (type == ElementType.FLOAT || type == ElementType.DOUBLE);
    }

    private static void accelerated(int kernel, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer first,
            int firstOffset, ByteBuffer src, int srcOffset, int bytes, int divisor) {
        Object dstArray = UNSAFE.getObject(dst, ARRAY_FIELD);
        long dstAddress = UNSAFE.getLong(dst, ADDRESS_FIELD) + dstOffset;
        Object firstArray = UNSAFE.getObject(first, ARRAY_FIELD);
        long firstAddress = UNSAFE.getLong(first, ADDRESS_FIELD) + firstOffset;
        Object srcArray = null;
        long srcAddress = 0;
        if (src != null) {
            srcArray = UNSAFE.getObject(src, ARRAY_FIELD);
            srcAddress = UNSAFE.getLong(src, ADDRESS_FIELD) + srcOffset;
        }
        Scratch scratch = SCRATCH.get();
        boolean isFloat = type == ElementType.FLOAT;
        Object a = isFloat ? scratch.floatsA : scratch.doublesA;
        Object b = isFloat ? scratch.floatsB : scratch.doublesB;
        long base = isFloat ? FLOAT_BASE : DOUBLE_BASE;
        for (int done = 0; done < bytes; done += BLOCK_BYTES) {
            int length = Math.min(BLOCK_BYTES, bytes - done);
            UNSAFE.copyMemory(firstArray, firstAddress + done, a, base, length);
            if (src != null) {
                UNSAFE.copyMemory(srcArray, srcAddress + done, b, base, length);
            }
            if (isFloat) {
                floats(kernel, (float[]) a, (float[]) b, length >>> 2, divisor);
            } else {
                doubles(kernel, (double[]) a, (double[]) b, length >>> 3, divisor);
            }
            UNSAFE.copyMemory(a, base, dstArray, dstAddress + done, length);
        }
        // The addresses read above are not references: keep direct buffers (and their memory) alive until here.
        Reference.reachabilityFence(dst);
        Reference.reachabilityFence(first);
        Reference.reachabilityFence(src);
    }

    private static void floats(int kernel, float[] a, float[] b, int count, int divisor) {
        float by = divisor;
        if (kernel == ADD) {
            for (int i = 0; i < count; i++) {
                a[i] += b[i];
            }
        } else if (isPowerOfTwo(divisor)) {
            // x / 2^k and x * 2^-k are the same real number, so they round to the same float; a
            // multiplication costs a fraction of a division.
            float scale = 1f / by;
            if (kernel == ADD_AND_DIVIDE) {
                for (int i = 0; i < count; i++) {
                    a[i] = (a[i] + b[i]) * scale;
                }
            } else {
                for (int i = 0; i < count; i++) {
                    a[i] *= scale;
                }
            }
        } else if (kernel == ADD_AND_DIVIDE) {
            for (int i = 0; i < count; i++) {
                a[i] = (a[i] + b[i]) / by;
            }
        } else {
            for (int i = 0; i < count; i++) {
                a[i] /= by;
            }
        }
    }

    private static void doubles(int kernel, double[] a, double[] b, int count, int divisor) {
        double by = divisor;
        if (kernel == ADD) {
            for (int i = 0; i < count; i++) {
                a[i] += b[i];
            }
        } else if (isPowerOfTwo(divisor)) {
            double scale = 1d / by;
            if (kernel == ADD_AND_DIVIDE) {
                for (int i = 0; i < count; i++) {
                    a[i] = (a[i] + b[i]) * scale;
                }
            } else {
                for (int i = 0; i < count; i++) {
                    a[i] *= scale;
                }
            }
        } else if (kernel == ADD_AND_DIVIDE) {
            for (int i = 0; i < count; i++) {
                a[i] = (a[i] + b[i]) / by;
            }
        } else {
            for (int i = 0; i < count; i++) {
                a[i] /= by;
            }
        }
    }

    /** Powers of two up to 2^30, whose reciprocals are exact normal floats and doubles. */
    private static boolean isPowerOfTwo(int divisor) {
        return divisor > 0 && (divisor & (divisor - 1)) == 0;
    }

    /**
     * Whether {@code Buffer.address} and {@code ByteBuffer.hb} mean here what the kernels assume
     * (true of JDK 17 to 25): for a heap buffer, its array and the array offset of its first byte;
     * for a direct buffer, no array and the address of its first byte.
     */
    private static boolean layoutAsExpected(sun.misc.Unsafe unsafe, long addressField, long arrayField, long byteBase) {
        byte[] array = new byte[16];
        ByteBuffer heap = ByteBuffer.wrap(array).position(3).slice().asReadOnlyBuffer();
        boolean heapOk = unsafe.getObject(heap, arrayField) == array
                && unsafe.getLong(heap, addressField) == byteBase + 3;
        ByteBuffer direct = ByteBuffer.allocateDirect(16);
        ByteBuffer directSlice = direct.position(5).slice();
        direct.put(5, (byte) 42);
        boolean directOk = unsafe.getObject(directSlice, arrayField) == null
                && unsafe.getByte(unsafe.getLong(directSlice, addressField)) == 42
                && unsafe.getLong(directSlice, addressField) == unsafe.getLong(direct, addressField) + 5;
        Reference.reachabilityFence(direct);
        return heapOk && directOk;
    }

    /** One thread's blocks. */
    private static final class Scratch {
        final float[] floatsA = new float[BLOCK_BYTES / Float.BYTES];
        final float[] floatsB = new float[BLOCK_BYTES / Float.BYTES];
        final double[] doublesA = new double[BLOCK_BYTES / Double.BYTES];
        final double[] doublesB = new double[BLOCK_BYTES / Double.BYTES];
    }
}
