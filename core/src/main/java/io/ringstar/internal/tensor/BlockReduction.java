package io.ringstar.internal.tensor;

import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The block loop of {@link Reduction}'s accelerated path: copies a block of each operand into
 * per-thread arrays with {@code Unsafe.copyMemory}, has {@link FloatKernels},
 * {@link IntegerKernels} or {@link HalfKernels} compute there, and copies the block back (why,
 * in {@link Reduction}). Owned by {@link Reduction}, which checks the regions first; nothing here
 * checks a bound.
 */
final class BlockReduction {
    /**
     * Bytes per block: of 4, 8, 16 and 32 KiB, 8 KiB measured best for float and double at 1 and
     * 64 MiB (by about a tenth over 4 KiB); the two blocks of a call then take half of a 32 KiB L1
     * cache.
     */
    static final int BLOCK_BYTES = 8192;
    /**
     * Bytes per block of HALF and BFLOAT16, whose blocks pass through nine more arrays of a lane
     * each ({@link HalfKernels}): at 4 KiB all of them take about 44 KiB, near a 48 KiB L1 cache
     * (chosen so, not measured against 8 KiB).
     */
    static final int HALF_BLOCK_BYTES = 4096;

    private static final sun.misc.Unsafe UNSAFE;
    /** Offsets of {@code Buffer.address} and {@code ByteBuffer.hb}, or -1 when unusable. */
    private static final long ADDRESS_FIELD;
    private static final long ARRAY_FIELD;
    private static final long FLOAT_BASE;
    private static final long DOUBLE_BASE;
    private static final long INT_BASE;
    private static final long LONG_BASE;
    private static final long SHORT_BASE;

    /** Whether the block kernels can be used here, rather than the scalar fallback. */
    static final boolean AVAILABLE;

    static {
        sun.misc.Unsafe unsafe = null;
        long address = -1;
        long array = -1;
        long[] bases = new long[5];
        boolean available;
        try {
            Field field = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            unsafe = (sun.misc.Unsafe) field.get(null);
            address = unsafe.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            array = unsafe.objectFieldOffset(ByteBuffer.class.getDeclaredField("hb"));
            bases[0] = unsafe.arrayBaseOffset(float[].class);
            bases[1] = unsafe.arrayBaseOffset(double[].class);
            bases[2] = unsafe.arrayBaseOffset(int[].class);
            bases[3] = unsafe.arrayBaseOffset(long[].class);
            bases[4] = unsafe.arrayBaseOffset(short[].class);
            available = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN
                    && layoutAsExpected(unsafe, address, array, unsafe.arrayBaseOffset(byte[].class));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            available = false;
        }
        UNSAFE = available ? unsafe : null;
        ADDRESS_FIELD = address;
        ARRAY_FIELD = array;
        FLOAT_BASE = bases[0];
        DOUBLE_BASE = bases[1];
        INT_BASE = bases[2];
        LONG_BASE = bases[3];
        SHORT_BASE = bases[4];
        AVAILABLE = available;
    }

    /**
     * Whether HALF and BFLOAT16 go through {@link VectorHalfKernels}: only where the JVM was started
     * with {@code --add-modules jdk.incubator.vector} (the class is not even loaded otherwise), and
     * {@code -Dringstar.vectors=false} turns it off. A flag only adds speed: both paths give the
     * same bits.
     */
    static final boolean VECTORS = AVAILABLE && vectorsPresent();

    private static boolean vectorsPresent() {
        if (!Boolean.parseBoolean(System.getProperty("ringstar.vectors", "true"))
                || ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return false;
        }
        try {
            return VectorHalfKernels.lanes() >= 4;
        } catch (LinkageError | RuntimeException e) {
            return false; // a JVM whose Vector API lacks a species or an operation: the array passes do
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private BlockReduction() {
    }

    /**
     * {@code dst = first (kernel) src} over {@code bytes > 0} bytes; {@code src} is null for DIVIDE.
     * {@code vectors}, which may be true only where {@link #VECTORS} is, sends HALF and BFLOAT16
     * through {@link VectorHalfKernels} (false: the tests' way to reach {@link HalfKernels} there too).
     */
    static void apply(int kernel, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer first,
            int firstOffset, ByteBuffer src, int srcOffset, int bytes, int divisor, boolean vectors) {
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
        Object a;
        Object b;
        long base;
        int block = BLOCK_BYTES;
        switch (type) {
            case FLOAT:
                a = scratch.floats[0];
                b = scratch.floats[1];
                base = FLOAT_BASE;
                break;
            case DOUBLE:
                a = scratch.doubles[0];
                b = scratch.doubles[1];
                base = DOUBLE_BASE;
                break;
            case LONG:
                a = scratch.longs()[0];
                b = scratch.longs()[1];
                base = LONG_BASE;
                break;
            case HALF:
            case BFLOAT16:
                if (vectors) {
                    a = scratch.shorts()[0];
                    b = scratch.shorts()[1];
                    base = SHORT_BASE;
                    break;
                }
                block = HALF_BLOCK_BYTES;
                // fall through: two 16-bit elements a packed int
            default:
                a = scratch.ints()[0];
                b = scratch.ints()[1];
                base = INT_BASE;
        }
        for (int done = 0; done < bytes; done += block) {
            int length = Math.min(block, bytes - done);
            UNSAFE.copyMemory(firstArray, firstAddress + done, a, base, length);
            if (src != null) {
                UNSAFE.copyMemory(srcArray, srcAddress + done, b, base, length);
            }
            if (a instanceof short[]) {
                VectorHalfKernels.combine(kernel, type == ElementType.HALF, (short[]) a, (short[]) b, length >>> 1,
                        divisor);
            } else {
                compute(kernel, type, a, b, length, divisor, scratch);
            }
            UNSAFE.copyMemory(a, base, dstArray, dstAddress + done, length);
        }
        // The addresses read above are not references: keep direct buffers (and their memory) alive until here.
        Reference.reachabilityFence(dst);
        Reference.reachabilityFence(first);
        Reference.reachabilityFence(src);
    }

    /** One block of {@code length} bytes, into {@code a}. */
    private static void compute(int kernel, ElementType type, Object a, Object b, int length, int divisor,
            Scratch scratch) {
        switch (type) {
            case FLOAT:
                FloatKernels.floats(kernel, (float[]) a, (float[]) b, length >>> 2, divisor);
                break;
            case DOUBLE:
                FloatKernels.doubles(kernel, (double[]) a, (double[]) b, length >>> 3, divisor);
                break;
            case INT:
                IntegerKernels.ints(kernel, (int[]) a, (int[]) b, length >>> 2);
                break;
            case LONG:
                IntegerKernels.longs(kernel, (long[]) a, (long[]) b, length >>> 3);
                break;
            default:
                // An odd count leaves half of the last int stale: computed, and not copied back.
                HalfKernels.combine(kernel, type == ElementType.HALF, scratch, (length + 3) >>> 2, divisor);
        }
    }

    /** The same bits, from an int array into a float array: C2 vectorizes no loop of {@code intBitsToFloat}. */
    static void reinterpret(int[] from, float[] to, int count) {
        UNSAFE.copyMemory(from, INT_BASE, to, FLOAT_BASE, (long) count * Integer.BYTES);
    }

    /** The same bits, from a float array into an int array. */
    static void reinterpret(float[] from, int[] to, int count) {
        UNSAFE.copyMemory(from, FLOAT_BASE, to, INT_BASE, (long) count * Float.BYTES);
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
                && unsafe.getLong(directSlice, addressField) == unsafe.getLong(direct, addressField) + 5
                && unsafe.getByte(unsafe.getLong(directSlice, addressField)) == 42;
        Reference.reachabilityFence(direct);
        return heapOk && directOk;
    }

    /**
     * One thread's blocks: float and double made at once, the others (and the 16-bit types'
     * widened lanes) when first used, so a thread that reduces floats only holds 32 KiB.
     */
    static final class Scratch {
        final float[][] floats = {new float[BLOCK_BYTES / Float.BYTES], new float[BLOCK_BYTES / Float.BYTES]};
        final double[][] doubles = {new double[BLOCK_BYTES / Double.BYTES], new double[BLOCK_BYTES / Double.BYTES]};
        private int[][] ints;
        private long[][] longs;
        private short[][] shorts;
        private int[][] laneInts;
        private float[][] laneFloats;

        /** Two blocks of ints, or of packed 16-bit pairs. */
        int[][] ints() {
            if (ints == null) {
                ints = new int[][] {new int[BLOCK_BYTES / Integer.BYTES], new int[BLOCK_BYTES / Integer.BYTES]};
            }
            return ints;
        }

        long[][] longs() {
            if (longs == null) {
                longs = new long[][] {new long[BLOCK_BYTES / Long.BYTES], new long[BLOCK_BYTES / Long.BYTES]};
            }
            return longs;
        }

        /** Two blocks of 16-bit elements, for {@link VectorHalfKernels}. */
        short[][] shorts() {
            if (shorts == null) {
                shorts = new short[][] {new short[BLOCK_BYTES / 2], new short[BLOCK_BYTES / 2]};
            }
            return shorts;
        }

        /** The 16-bit kernels' work arrays, of one lane (every other element) of a block each. */
        int[][] laneInts() {
            if (laneInts == null) {
                laneInts = new int[5][HALF_BLOCK_BYTES / Integer.BYTES];
            }
            return laneInts;
        }

        float[][] laneFloats() {
            if (laneFloats == null) {
                laneFloats = new float[4][HALF_BLOCK_BYTES / Integer.BYTES];
            }
            return laneFloats;
        }
    }
}
