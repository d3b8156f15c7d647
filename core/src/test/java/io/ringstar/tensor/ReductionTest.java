package io.ringstar.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class ReductionTest {

    private static final byte GUARD = (byte) 0x5A;
    /** Offsets that are multiples of neither 4 nor 8, so no element is aligned. */
    private static final int DST_OFFSET = 13;
    private static final int SRC_OFFSET = 6;
    private static final int TAIL = 16;
    private static final int[] COUNTS = {0, 1, 2, 7, 15, 16, 17, 1000, 4099, 100003};

    /** How a test buffer is made; slices start 3 bytes into their memory, so their array offset or address is odd. */
    enum Memory {
        HEAP, DIRECT, HEAP_SLICE, DIRECT_SLICE;

        ByteBuffer allocate(int bytes) {
            ByteBuffer buffer = switch (this) {
                case HEAP -> ByteBuffer.allocate(bytes);
                case DIRECT -> ByteBuffer.allocateDirect(bytes);
                case HEAP_SLICE -> ByteBuffer.allocate(bytes + 3).position(3).slice();
                case DIRECT_SLICE -> ByteBuffer.allocateDirect(bytes + 3).position(3).slice();
            };
            byte[] guards = new byte[bytes];
            Arrays.fill(guards, GUARD);
            buffer.put(0, guards);
            // The kernels read and write little-endian whatever the buffer's order.
            return buffer.order(ByteOrder.BIG_ENDIAN);
        }
    }

    /** The two implementations: the one in use on this JVM, and the scalar fallback. */
    enum Path {
        ACCELERATED, SCALAR;

        void add(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
            if (this == ACCELERATED) {
                Reduction.add(type, dst, dstOffset, src, srcOffset, count);
            } else {
                ScalarReduction.add(type, dst, dstOffset, src, srcOffset, count);
            }
        }

        void addAndDivide(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count,
                int divisor) {
            if (this == ACCELERATED) {
                Reduction.addAndDivide(type, dst, dstOffset, src, srcOffset, count, divisor);
            } else {
                ScalarReduction.addAndDivide(type, dst, dstOffset, src, srcOffset, count, divisor);
            }
        }

        void divide(ElementType type, ByteBuffer buffer, int offset, int count, int divisor) {
            if (this == ACCELERATED) {
                Reduction.divide(type, buffer, offset, count, divisor);
            } else {
                ScalarReduction.divide(type, buffer, offset, count, divisor);
            }
        }
    }

    /** One kernel call: add (divisor 0), addAndDivide, or divide alone. */
    record Kernel(String name, int divisor) {
        static final List<Kernel> ALL = List.of(new Kernel("add", 0), new Kernel("addAndDivide", 1),
                new Kernel("addAndDivide", 3), new Kernel("addAndDivide", 4), new Kernel("addAndDivide", 7),
                new Kernel("divide", 3), new Kernel("divide", 4));

        void run(Path path, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
            switch (name) {
                case "add" -> path.add(type, dst, dstOffset, src, srcOffset, count);
                case "addAndDivide" -> path.addAndDivide(type, dst, dstOffset, src, srcOffset, count, divisor);
                default -> path.divide(type, dst, dstOffset, count, divisor);
            }
        }

        /** The closed form, element by element, rounded as Java rounds each operation. */
        long expectedBits(ElementType type, int i) {
            if (type == ElementType.FLOAT) {
                float value = switch (name) {
                    case "add" -> floatA(i) + floatB(i);
                    case "addAndDivide" -> (floatA(i) + floatB(i)) / divisor;
                    default -> floatA(i) / divisor;
                };
                return Float.floatToRawIntBits(value) & 0xFFFF_FFFFL;
            }
            double value = switch (name) {
                case "add" -> doubleA(i) + doubleB(i);
                case "addAndDivide" -> (doubleA(i) + doubleB(i)) / divisor;
                default -> doubleA(i) / divisor;
            };
            return Double.doubleToRawLongBits(value);
        }

        @Override
        public String toString() {
            return name.equals("add") ? name : name + " by " + divisor;
        }
    }

    static Stream<Arguments> typesAndCounts() {
        List<Arguments> cases = new ArrayList<>();
        for (ElementType type : new ElementType[] {ElementType.FLOAT, ElementType.DOUBLE}) {
            for (int count : COUNTS) {
                cases.add(Arguments.of(type, count));
            }
        }
        return cases.stream();
    }

    // Values with no pattern in their low bits, a few near the subnormal range, so that a kernel
    // that multiplied by the reciprocal of 3 or 7 instead of dividing, or added in another order,
    // would round some of them differently.

    private static float floatA(int i) {
        return i % 97 == 5 ? Float.MIN_NORMAL * (i % 11 + 1) : i * 0.37f - 11.5f;
    }

    private static float floatB(int i) {
        return i % 97 == 5 ? -Float.MIN_NORMAL * 0.75f : 1f / (i + 3) + (i % 5) * 1e6f;
    }

    private static double doubleA(int i) {
        return i % 97 == 5 ? Double.MIN_NORMAL * (i % 11 + 1) : i * 0.1 - Math.PI;
    }

    private static double doubleB(int i) {
        return i % 97 == 5 ? -Double.MIN_NORMAL * 0.75 : Math.sqrt(i + 2) * ((i & 1) == 0 ? 1 : -1e-9);
    }

    private static void fill(ElementType type, ByteBuffer buffer, int offset, int count, boolean first) {
        for (int i = 0; i < count; i++) {
            if (type == ElementType.FLOAT) {
                putBits(buffer, offset + 4 * i, 4, Float.floatToRawIntBits(first ? floatA(i) : floatB(i)));
            } else {
                putBits(buffer, offset + 8 * i, 8, Double.doubleToRawLongBits(first ? doubleA(i) : doubleB(i)));
            }
        }
    }

    /** Little-endian, independently of the buffer's order and of the code under test. */
    private static void putBits(ByteBuffer buffer, int at, int bytes, long bits) {
        for (int b = 0; b < bytes; b++) {
            buffer.put(at + b, (byte) (bits >>> (8 * b)));
        }
    }

    private static long getBits(ByteBuffer buffer, int at, int bytes) {
        long bits = 0;
        for (int b = bytes - 1; b >= 0; b--) {
            bits = (bits << 8) | (buffer.get(at + b) & 0xFF);
        }
        return bits;
    }

    private static long sourceBits(ElementType type, int i) {
        return type == ElementType.FLOAT ? Float.floatToRawIntBits(floatB(i)) & 0xFFFF_FFFFL
                : Double.doubleToRawLongBits(doubleB(i));
    }

    /** Up to the capacity: a test may have moved the buffer's limit. */
    private static void assertGuards(ByteBuffer buffer, int from, int to, String context) {
        ByteBuffer all = buffer.duplicate().clear();
        for (int i = 0; i < all.capacity(); i++) {
            if (i < from || i >= to) {
                assertEquals(GUARD, all.get(i),
                        "byte " + i + " outside [" + from + ", " + to + ") was written: " + context);
            }
        }
    }

    private static void assertElements(ElementType type, ByteBuffer buffer, int offset, int count, String context,
            java.util.function.IntToLongFunction expected) {
        int size = type.bytes();
        ByteBuffer all = buffer.duplicate().clear();
        for (int i = 0; i < count; i++) {
            long actual = getBits(all, offset + size * i, size);
            long wanted = expected.applyAsLong(i);
            if (actual != wanted) {
                assertEquals(Long.toHexString(wanted), Long.toHexString(actual),
                        "element " + i + " of " + count + ": " + context);
            }
        }
    }

    @Test
    void theAcceleratedKernelsAreInUseOnThisJvm() {
        // Otherwise the sweep below would test the fallback twice.
        assertTrue(Reduction.ACCELERATED, "Reduction fell back to its scalar loops on "
                + System.getProperty("java.vm.name") + " " + System.getProperty("java.version") + " "
                + System.getProperty("os.arch"));
    }

    @ParameterizedTest
    @MethodSource("typesAndCounts")
    void everyKernelOnEveryMemoryMatchesTheClosedForm(ElementType type, int count) {
        int bytes = count * type.bytes();
        for (Path path : Path.values()) {
            for (Memory dstMemory : Memory.values()) {
                for (Memory srcMemory : Memory.values()) {
                    for (boolean readOnly : new boolean[] {false, true}) {
                        if (path == Path.SCALAR && (dstMemory != srcMemory || count > 4099)) {
                            continue; // the fallback has no memory-specific code: a few combinations do
                        }
                        for (Kernel kernel : Kernel.ALL) {
                            String context = path + " " + kernel + " " + type + " into " + dstMemory
                                    + " from " + srcMemory + (readOnly ? " read-only" : "");
                            ByteBuffer dst = dstMemory.allocate(DST_OFFSET + bytes + TAIL);
                            ByteBuffer writable = srcMemory.allocate(SRC_OFFSET + bytes + TAIL);
                            fill(type, dst, DST_OFFSET, count, true);
                            fill(type, writable, SRC_OFFSET, count, false);
                            ByteBuffer src = readOnly ? writable.asReadOnlyBuffer() : writable;
                            dst.limit(dst.capacity() - 1).position(2);
                            src.limit(src.capacity() - 2).position(1);

                            kernel.run(path, type, dst, DST_OFFSET, src, SRC_OFFSET, count);

                            assertElements(type, dst, DST_OFFSET, count, context, i -> kernel.expectedBits(type, i));
                            assertElements(type, src, SRC_OFFSET, count, context + " (source)",
                                    i -> sourceBits(type, i));
                            assertGuards(dst, DST_OFFSET, DST_OFFSET + bytes, context);
                            assertGuards(src, SRC_OFFSET, SRC_OFFSET + bytes, context + " (source)");
                            assertEquals(2, dst.position(), context);
                            assertEquals(dst.capacity() - 1, dst.limit(), context);
                            assertEquals(1, src.position(), context);
                            assertEquals(src.capacity() - 2, src.limit(), context);
                            assertEquals(ByteOrder.BIG_ENDIAN, dst.order(), context);
                        }
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("typesAndCounts")
    void sourceAndDestinationInOneBuffer(ElementType type, int count) {
        // The star's rank 0 adds a received chunk into its bucket; both may be regions of one buffer.
        int bytes = count * type.bytes();
        int srcOffset = DST_OFFSET + bytes + 5;
        for (Path path : Path.values()) {
            for (Memory memory : Memory.values()) {
                for (Kernel kernel : Kernel.ALL) {
                    String context = path + " " + kernel + " " + type + " within one " + memory;
                    ByteBuffer buffer = memory.allocate(srcOffset + bytes + TAIL);
                    fill(type, buffer, DST_OFFSET, count, true);
                    fill(type, buffer, srcOffset, count, false);
                    kernel.run(path, type, buffer, DST_OFFSET, buffer.asReadOnlyBuffer(), srcOffset, count);
                    assertElements(type, buffer, DST_OFFSET, count, context, i -> kernel.expectedBits(type, i));
                    assertElements(type, buffer, srcOffset, count, context + " (source)", i -> sourceBits(type, i));
                    assertGuards(buffer, DST_OFFSET, srcOffset + bytes, context);
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 17, 4099})
    void addingARegionToItselfDoublesIt(int count) {
        for (Memory memory : Memory.values()) {
            ByteBuffer buffer = memory.allocate(DST_OFFSET + 4 * count + TAIL);
            fill(ElementType.FLOAT, buffer, DST_OFFSET, count, true);
            Reduction.add(ElementType.FLOAT, buffer, DST_OFFSET, buffer, DST_OFFSET, count);
            assertElements(ElementType.FLOAT, buffer, DST_OFFSET, count, memory.toString(),
                    i -> Float.floatToRawIntBits(floatA(i) + floatA(i)) & 0xFFFF_FFFFL);
        }
    }

    @Test
    void theDataTellsDivisionFromMultiplicationByTheReciprocal() {
        // Guards the sweep's teeth: with these values, x * (1/3) rounds differently from x / 3.
        int floats = 0;
        int doubles = 0;
        for (int i = 0; i < 1000; i++) {
            float f = floatA(i) + floatB(i);
            floats += f / 3 != f * (1f / 3) ? 1 : 0;
            double d = doubleA(i) + doubleB(i);
            doubles += d / 3 != d * (1d / 3) ? 1 : 0;
        }
        assertTrue(floats > 10 && doubles > 10, floats + " floats and " + doubles + " doubles differ");
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 1 << 20, 1 << 30, 3, -4, 0})
    void divisorsRoundLikeDivisionAtTheEdges(int divisor) {
        float[] floats = {Float.MIN_VALUE, 3 * Float.MIN_VALUE, Float.MIN_NORMAL, 1.5f * Float.MIN_NORMAL,
            Float.MAX_VALUE, -0f, 0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1f, -7.75f, 0x1.fffffep-120f};
        double[] doubles = {Double.MIN_VALUE, 3 * Double.MIN_VALUE, Double.MIN_NORMAL, 1.5 * Double.MIN_NORMAL,
            Double.MAX_VALUE, -0d, 0d, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1d, -7.75,
            0x1.fffffffffffffp-1000};
        for (Path path : Path.values()) {
            for (boolean direct : new boolean[] {false, true}) {
                Memory memory = direct ? Memory.DIRECT : Memory.HEAP;
                ByteBuffer dst = memory.allocate(4 * floats.length);
                ByteBuffer src = memory.allocate(4 * floats.length);
                for (int i = 0; i < floats.length; i++) {
                    putBits(dst, 4 * i, 4, Float.floatToRawIntBits(floats[i]));
                    putBits(src, 4 * i, 4, Float.floatToRawIntBits(floats[(i + 5) % floats.length]));
                }
                path.addAndDivide(ElementType.FLOAT, dst, 0, src, 0, floats.length, divisor);
                for (int i = 0; i < floats.length; i++) {
                    float expected = (floats[i] + floats[(i + 5) % floats.length]) / divisor;
                    assertEquals(Float.floatToIntBits(expected),
                            Float.floatToIntBits(Float.intBitsToFloat((int) getBits(dst, 4 * i, 4))),
                            path + " " + memory + " float " + i + ": (" + floats[i] + " + "
                                    + floats[(i + 5) % floats.length] + ") / " + divisor);
                }
                ByteBuffer buffer = memory.allocate(8 * doubles.length);
                for (int i = 0; i < doubles.length; i++) {
                    putBits(buffer, 8 * i, 8, Double.doubleToRawLongBits(doubles[i]));
                }
                path.divide(ElementType.DOUBLE, buffer, 0, doubles.length, divisor);
                for (int i = 0; i < doubles.length; i++) {
                    double expected = doubles[i] / divisor;
                    assertEquals(Double.doubleToLongBits(expected),
                            Double.doubleToLongBits(Double.longBitsToDouble(getBits(buffer, 8 * i, 8))),
                            path + " " + memory + " double " + i + ": " + doubles[i] + " / " + divisor);
                }
            }
        }
    }

    @Test
    void addKeepsSpecialValues() {
        ByteBuffer dst = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer src = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        dst.putFloat(0, Float.POSITIVE_INFINITY).putFloat(4, Float.NaN).putFloat(8, -0f).putFloat(12, Float.MAX_VALUE);
        src.putFloat(0, 1f).putFloat(4, 1f).putFloat(8, -0f).putFloat(12, Float.MAX_VALUE);
        Reduction.add(ElementType.FLOAT, dst, 0, src, 0, 4);
        assertEquals(Float.POSITIVE_INFINITY, dst.getFloat(0));
        assertEquals(Float.NaN, dst.getFloat(4));
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(dst.getFloat(8)));
        assertEquals(Float.POSITIVE_INFINITY, dst.getFloat(12));
    }

    @Test
    void divideGivesTheAverageOfIdenticalContributions() {
        // n ranks each contributing x, summed then divided by n, is x again for small n and exact x.
        ByteBuffer buffer = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        double x = 0.75;
        buffer.putDouble(0, x + x + x).putDouble(8, 4.5).putDouble(16, -9);
        Reduction.divide(ElementType.DOUBLE, buffer, 0, 3, 3);
        assertEquals(0.75, buffer.getDouble(0));
        assertEquals(1.5, buffer.getDouble(8));
        assertEquals(-3.0, buffer.getDouble(16));
    }

    @Test
    void regionsBeyondTheCapacityAndReadOnlyDestinationsAreRefused() {
        for (Path path : Path.values()) {
            ByteBuffer dst = Memory.DIRECT.allocate(64);
            ByteBuffer src = Memory.HEAP.allocate(64);
            assertThrows(IndexOutOfBoundsException.class, () -> path.add(ElementType.DOUBLE, dst, 8, src, 0, 8),
                    path.toString());
            assertThrows(IndexOutOfBoundsException.class, () -> path.add(ElementType.FLOAT, dst, 0, src, 1, 16),
                    path.toString());
            assertThrows(IndexOutOfBoundsException.class,
                    () -> path.addAndDivide(ElementType.FLOAT, dst, -1, src, 0, 1, 2), path.toString());
            assertThrows(IndexOutOfBoundsException.class, () -> path.divide(ElementType.FLOAT, dst, 0, -1, 2),
                    path.toString());
            assertThrows(ReadOnlyBufferException.class,
                    () -> path.add(ElementType.FLOAT, dst.asReadOnlyBuffer(), 0, src, 0, 4), path.toString());
            assertGuards(dst, 0, 0, path + ": a refused call wrote");
        }
    }

    @Test
    void theCapacityBoundsTheRegionsNotTheLimit() {
        for (Path path : Path.values()) {
            ByteBuffer dst = Memory.DIRECT.allocate(64);
            ByteBuffer src = Memory.HEAP.allocate(64);
            fill(ElementType.FLOAT, dst, 0, 16, true);
            fill(ElementType.FLOAT, src, 0, 16, false);
            path.add(ElementType.FLOAT, dst.limit(4), 0, src.limit(0), 0, 16);
            assertElements(ElementType.FLOAT, dst, 0, 16, path.toString(),
                    i -> Float.floatToRawIntBits(floatA(i) + floatB(i)) & 0xFFFF_FFFFL);
        }
    }

    @Test
    void theKernelsAllocateNothingOnceWarm() {
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assumeTrue(threads instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        com.sun.management.ThreadMXBean counter = (com.sun.management.ThreadMXBean) threads;
        assumeTrue(counter.isThreadAllocatedMemoryEnabled(), "per-thread allocation counting is off");
        ByteBuffer dst = Memory.DIRECT.allocate(DST_OFFSET + 8 * 5000 + TAIL);
        ByteBuffer src = Memory.HEAP.allocate(SRC_OFFSET + 8 * 5000 + TAIL).asReadOnlyBuffer();
        int calls = 20_000;
        long allocated = 0;
        for (int round = 0; round < 2; round++) {
            long before = counter.getThreadAllocatedBytes(Thread.currentThread().getId());
            for (int i = 0; i < calls; i++) {
                Reduction.add(ElementType.FLOAT, dst, DST_OFFSET, src, SRC_OFFSET, 5000);
                Reduction.addAndDivide(ElementType.DOUBLE, dst, DST_OFFSET, src, SRC_OFFSET, 50, 3);
                Reduction.divide(ElementType.DOUBLE, dst, DST_OFFSET, 50, 3);
            }
            allocated = counter.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        }
        // Round 0 warms up; the views the kernels used to make cost 240 bytes a call.
        assertTrue(allocated < calls, allocated + " bytes allocated by " + 3 * calls + " calls");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 1000, 1025})
    void copyMovesExactlyTheBytes(int length) {
        ByteBuffer src = Memory.HEAP.allocate(SRC_OFFSET + length + TAIL);
        for (int i = 0; i < length; i++) {
            src.put(SRC_OFFSET + i, (byte) (i * 31 + 7));
        }
        ByteBuffer dst = Memory.DIRECT.allocate(DST_OFFSET + length + TAIL);
        src.position(3);
        dst.position(5);
        Reduction.copy(dst, DST_OFFSET, src, SRC_OFFSET, length);
        for (int i = 0; i < length; i++) {
            assertEquals((byte) (i * 31 + 7), dst.get(DST_OFFSET + i), "byte " + i);
        }
        assertGuards(dst, DST_OFFSET, DST_OFFSET + length, "copy");
        assertEquals(3, src.position());
        assertEquals(5, dst.position());
    }
}
