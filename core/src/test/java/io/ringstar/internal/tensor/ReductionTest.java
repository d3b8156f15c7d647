package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.ReductionCases.assertElements;
import static io.ringstar.internal.tensor.ReductionCases.assertGuards;
import static io.ringstar.internal.tensor.ReductionCases.bits;
import static io.ringstar.internal.tensor.ReductionCases.doubleA;
import static io.ringstar.internal.tensor.ReductionCases.doubleB;
import static io.ringstar.internal.tensor.ReductionCases.fill;
import static io.ringstar.internal.tensor.ReductionCases.floatA;
import static io.ringstar.internal.tensor.ReductionCases.floatB;
import static io.ringstar.internal.tensor.ReductionCases.getBits;
import static io.ringstar.internal.tensor.ReductionCases.putBits;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ReductionCases.Kernel;
import io.ringstar.internal.tensor.ReductionCases.Memory;
import io.ringstar.internal.tensor.ReductionCases.Path;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class ReductionTest {

    /** Offsets that are multiples of neither 4 nor 8, so no element is aligned. */
    private static final int DST_OFFSET = 13;
    private static final int SRC_OFFSET = 6;
    private static final int TAIL = 16;
    /** Around the blocks: 2048 floats or 4096 halves are 8 KiB, 1024 doubles or 2048 halves are 4 KiB. */
    private static final int[] COUNTS = {0, 1, 2, 7, 15, 17, 1000, 1023, 1025, 2047, 2049, 4099, 10007, 100003};
    /** Above this count, a few memory combinations stand for all of them (the block loop is the same). */
    private static final int FULL_SWEEP = 4099;

    static Stream<Arguments> typesAndCounts() {
        List<Arguments> cases = new ArrayList<>();
        for (ElementType type : ElementType.values()) {
            for (int count : COUNTS) {
                cases.add(Arguments.of(type, count));
            }
        }
        return cases.stream();
    }

    @Test
    void theAcceleratedKernelsAreInUseOnThisJvm() {
        // Otherwise the sweep below would test the fallback twice.
        assertTrue(Reduction.ACCELERATED, "Reduction fell back to its scalar loops on "
                + System.getProperty("java.vm.name") + " " + System.getProperty("java.version") + " "
                + System.getProperty("os.arch"));
    }

    @Test
    void theVectorKernelsAreInUseWhereTheJvmHasTheVectorApi() {
        // The build runs the tests with --add-modules jdk.incubator.vector, so that ARRAY_PASSES and
        // ACCELERATED are two different paths for HALF and BFLOAT16; without it they are one.
        boolean wanted = Boolean.parseBoolean(System.getProperty("ringstar.vectors", "true"));
        assertEquals(wanted && ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent(),
                BlockReduction.VECTORS);
    }

    @ParameterizedTest
    @MethodSource("typesAndCounts")
    void everyKernelOnEveryMemoryMatchesTheClosedForm(ElementType type, int count) {
        int bytes = count * type.bytes();
        for (Path path : Path.of(type)) {
            for (Memory dstMemory : Memory.values()) {
                for (Memory srcMemory : Memory.values()) {
                    for (boolean readOnly : new boolean[] {false, true}) {
                        if (path != Path.ACCELERATED && (dstMemory != srcMemory || count > 10007)) {
                            continue; // the memory-specific code is shared: a few combinations do
                        }
                        if (count > FULL_SWEEP && !sampled(dstMemory, srcMemory, readOnly)) {
                            continue;
                        }
                        for (Kernel kernel : Kernel.of(type)) {
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

                            assertElements(type, dst, DST_OFFSET, count, context, i -> kernel.expectedAt(type, i));
                            assertElements(type, src, SRC_OFFSET, count, context + " (source)",
                                    i -> bits(type, i, false));
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

    /** Six of the 32 combinations of memory and read-only, every memory at least once on either side. */
    private static boolean sampled(Memory dst, Memory src, boolean readOnly) {
        return (dst.ordinal() + 3 * src.ordinal() + (readOnly ? 1 : 0)) % 5 == 0;
    }

    @ParameterizedTest
    @MethodSource("typesAndCounts")
    void sourceAndDestinationInOneBuffer(ElementType type, int count) {
        // The star's rank 0 adds a received chunk into its bucket; both may be regions of one buffer.
        int bytes = count * type.bytes();
        int srcOffset = DST_OFFSET + bytes + 5;
        for (Path path : Path.of(type)) {
            for (Memory memory : Memory.values()) {
                for (Kernel kernel : Kernel.of(type)) {
                    String context = path + " " + kernel + " " + type + " within one " + memory;
                    ByteBuffer buffer = memory.allocate(srcOffset + bytes + TAIL);
                    fill(type, buffer, DST_OFFSET, count, true);
                    fill(type, buffer, srcOffset, count, false);
                    kernel.run(path, type, buffer, DST_OFFSET, buffer.asReadOnlyBuffer(), srcOffset, count);
                    assertElements(type, buffer, DST_OFFSET, count, context, i -> kernel.expectedAt(type, i));
                    assertElements(type, buffer, srcOffset, count, context + " (source)", i -> bits(type, i, false));
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
                Reduction.combine(ReduceOp.AVG, ElementType.HALF, dst, DST_OFFSET, dst, DST_OFFSET, src, SRC_OFFSET,
                        50, 3);
                Reduction.combine(ReduceOp.MAX, ElementType.LONG, dst, DST_OFFSET, dst, DST_OFFSET, src, SRC_OFFSET,
                        50, 1);
            }
            allocated = counter.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        }
        // Round 0 warms up; the views the kernels used to make cost 240 bytes a call.
        assertTrue(allocated < calls, allocated + " bytes allocated by " + 5 * calls + " calls");
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
