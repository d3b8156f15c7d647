package io.ringstar.internal.compression;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The top-k step of one rank, against a sort, and the layout and conversions it relies on. */
class TopKSelectorTest {
    private static ByteBuffer floats(float... values) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(values.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            buffer.putFloat(i * Float.BYTES, values[i]);
        }
        return buffer;
    }

    private static float[] floatsOf(ByteBuffer buffer, int offset, int count) {
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = buffer.getFloat(offset + i * Float.BYTES);
        }
        return values;
    }

    private static int[] intsOf(ByteBuffer buffer, int offset, int count) {
        int[] values = new int[count];
        for (int i = 0; i < count; i++) {
            values[i] = buffer.getInt(offset + i * Integer.BYTES);
        }
        return values;
    }

    @Test
    void keepsTheFractionRoundedUp() {
        assertEquals(1, PairLayout.keep(0.1, 10));
        assertEquals(3, PairLayout.keep(0.35, 7));
        assertEquals(1, PairLayout.keep(0.001, 1));
        assertEquals(0, PairLayout.keep(0.5, 0));
        assertEquals(1009, PairLayout.keep(1.0, 1009));
    }

    @Test
    void segmentsAreTheWindowsChunks() {
        PairLayout layout = new PairLayout().update(1009, 16, 0.25, ElementType.FLOAT, 3);
        assertEquals(64, layout.segments());
        int pairs = 0;
        for (int s = 0; s < layout.segments(); s++) {
            long length = layout.segmentStart(s + 1) - layout.segmentStart(s);
            assertEquals(15.5, length, 0.5, "segment " + s);
            assertEquals((int) Math.ceil(0.25 * length), layout.keep(s));
            assertEquals(pairs * 8, layout.indexOffset(s));
            assertEquals(pairs * 8 + layout.keep(s) * 4, layout.valueOffset(s));
            pairs += layout.keep(s);
        }
        assertEquals(pairs * 8, layout.blockBytes());
        PairLayout empty = new PairLayout().update(0, 16, 0.25, ElementType.DOUBLE, 3);
        assertEquals(1, empty.segments());
        assertEquals(0, empty.blockBytes());
    }

    @Test
    void tiesGoToTheLowerIndexAndWhatIsSentLeavesTheResidual() {
        PairLayout layout = new PairLayout().update(6, 6, 0.5, ElementType.FLOAT, 1);
        ByteBuffer residual = floats(0, 0, 0, 0, 0, 1);
        ByteBuffer block = ByteBuffer.allocateDirect(layout.blockBytes()).order(ByteOrder.LITTLE_ENDIAN);
        new TopKSelector().select(layout, floats(3, -3, 1, 3, -0f, 2), residual, 0, block, 0);
        // g' = 3, -3, 1, 3, -0, 3: four of magnitude 3, the three lowest indices go.
        assertArrayEquals(new int[] {0, 1, 3}, intsOf(block, 0, 3));
        assertArrayEquals(new float[] {3, -3, 3}, floatsOf(block, 12, 3));
        // 0 + -0 is +0: the residual holds g' as IEEE addition gives it.
        assertArrayEquals(new float[] {0, 0, 1, 0, 0, 3}, floatsOf(residual, 0, 6));
    }

    @Test
    void infinitiesAndNaNsAreTheLargest() {
        PairLayout layout = new PairLayout().update(5, 5, 0.4, ElementType.FLOAT, 1);
        ByteBuffer block = ByteBuffer.allocateDirect(layout.blockBytes()).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer source = floats(1e30f, Float.NaN, 5, Float.NEGATIVE_INFINITY, 7);
        new TopKSelector().select(layout, source, floats(0, 0, 0, 0, 0), 0, block, 0);
        assertArrayEquals(new int[] {1, 3}, intsOf(block, 0, 2));
    }

    /** Many segments, many equal magnitudes, both types, a residual carried over: against a sort. */
    @Test
    void choosesWhatASortChooses() {
        Random random = new Random(42);
        for (ElementType type : new ElementType[] {ElementType.FLOAT, ElementType.DOUBLE}) {
            int total = 1013;
            int size = type.bytes();
            ByteBuffer residual = ByteBuffer.allocateDirect(total * size).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer source = ByteBuffer.allocateDirect(total * size).order(ByteOrder.LITTLE_ENDIAN);
            double[] kept = new double[total];
            TopKSelector selector = new TopKSelector();
            for (int round = 0; round < 3; round++) {
                double[] expectedResidual = new double[total];
                for (int i = 0; i < total; i++) {
                    double value = random.nextInt(9) - 4 + (random.nextBoolean() ? 0 : random.nextGaussian() * 1e3);
                    value = type == ElementType.FLOAT ? (float) value : value;
                    put(type, source, i, value);
                    expectedResidual[i] = type == ElementType.FLOAT ? (float) (kept[i] + value) : kept[i] + value;
                }
                PairLayout layout = new PairLayout().update(total, 100, 0.13, type, 1);
                ByteBuffer block = ByteBuffer.allocateDirect(layout.blockBytes()).order(ByteOrder.LITTLE_ENDIAN);
                selector.select(layout, source, residual, 0, block, 0);
                for (int s = 0; s < layout.segments(); s++) {
                    int from = (int) layout.segmentStart(s);
                    int to = (int) layout.segmentStart(s + 1);
                    double[] g = expectedResidual;
                    int[] chosen = IntStream.range(from, to).boxed()
                            .sorted(Comparator.<Integer>comparingDouble(i -> -Math.abs(g[i])).thenComparingInt(i -> i))
                            .limit(layout.keep(s)).mapToInt(Integer::intValue).sorted().toArray();
                    assertArrayEquals(chosen, intsOf(block, layout.indexOffset(s), layout.keep(s)),
                            type + " segment " + s);
                    for (int p = 0; p < chosen.length; p++) {
                        assertEquals(g[chosen[p]], get(type, block, layout.valueOffset(s), p), 0.0);
                        expectedResidual[chosen[p]] = 0;
                    }
                }
                for (int i = 0; i < total; i++) {
                    kept[i] = get(type, residual, 0, i);
                    assertEquals(expectedResidual[i], kept[i], 0.0, type + " residual " + i);
                }
            }
        }
    }

    @Test
    void halfPrecisionRoundsAsHalfFloatsAndWidensExactly() {
        float[] values = {1f / 3, -65520f, 65504f, Float.NaN, 1e-8f, -0f, 3.14159f};
        ByteBuffer half = ByteBuffer.allocateDirect(values.length * 2).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer back = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (ElementType wire : new ElementType[] {ElementType.HALF, ElementType.BFLOAT16}) {
            HalfPrecision.narrow(ElementType.FLOAT, wire, floats(values), half, values.length);
            HalfPrecision.widen(ElementType.FLOAT, wire, half, back, values.length);
            float[] expected = new float[values.length];
            for (int i = 0; i < values.length; i++) {
                expected[i] = wire == ElementType.HALF ? HalfFloats.halfToFloat(HalfFloats.floatToHalf(values[i]))
                        : HalfFloats.bfloat16ToFloat(HalfFloats.floatToBfloat16(values[i]));
            }
            assertEquals(Arrays.toString(expected), Arrays.toString(floatsOf(back, 0, values.length)), wire.toString());
        }
    }

    private static void put(ElementType type, ByteBuffer buffer, int index, double value) {
        if (type == ElementType.DOUBLE) {
            buffer.putDouble(index * 8, value);
        } else {
            buffer.putFloat(index * 4, (float) value);
        }
    }

    private static double get(ElementType type, ByteBuffer buffer, int offset, int index) {
        return type == ElementType.DOUBLE ? buffer.getDouble(offset + index * 8) : buffer.getFloat(offset + index * 4);
    }
}
