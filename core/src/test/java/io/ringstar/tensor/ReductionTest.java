package io.ringstar.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReductionTest {

    private static final byte GUARD = (byte) 0x5A;
    private static final int DST_OFFSET = 24;
    private static final int SRC_OFFSET = 12; // not a multiple of 8: doubles need not be aligned
    private static final int TAIL = 16;

    private static ByteBuffer buffer(boolean direct, int bytes) {
        ByteBuffer buffer = (direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes))
                .order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < bytes; i++) {
            buffer.put(i, GUARD);
        }
        return buffer;
    }

    private static float floatA(int i) {
        return i * 0.37f - 11.5f;
    }

    private static float floatB(int i) {
        return 1f / (i + 3) + (i % 5) * 1e6f;
    }

    private static double doubleA(int i) {
        return i * 0.1 - Math.PI;
    }

    private static double doubleB(int i) {
        return Math.sqrt(i + 2) * ((i & 1) == 0 ? 1 : -1e-9);
    }

    private static void assertGuards(ByteBuffer buffer, int from, int to) {
        for (int i = 0; i < buffer.capacity(); i++) {
            if (i < from || i >= to) {
                assertEquals(GUARD, buffer.get(i), "byte " + i + " outside [" + from + ", " + to + ") was written");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 1000, 1025})
    void addFloats(int count) {
        for (boolean direct : new boolean[] {false, true}) {
            ByteBuffer dst = buffer(direct, DST_OFFSET + count * 4 + TAIL);
            ByteBuffer src = buffer(direct, SRC_OFFSET + count * 4 + TAIL);
            for (int i = 0; i < count; i++) {
                dst.putFloat(DST_OFFSET + 4 * i, floatA(i));
                src.putFloat(SRC_OFFSET + 4 * i, floatB(i));
            }
            Reduction.add(ElementType.FLOAT, dst, DST_OFFSET, src, SRC_OFFSET, count);
            for (int i = 0; i < count; i++) {
                float expected = floatA(i) + floatB(i);
                assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(dst.getFloat(DST_OFFSET + 4 * i)),
                        "element " + i + " (direct " + direct + ")");
                assertEquals(floatB(i), src.getFloat(SRC_OFFSET + 4 * i), "source element " + i + " is unchanged");
            }
            assertGuards(dst, DST_OFFSET, DST_OFFSET + 4 * count);
            assertGuards(src, SRC_OFFSET, SRC_OFFSET + 4 * count);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 1000, 1025})
    void addDoubles(int count) {
        for (boolean direct : new boolean[] {false, true}) {
            ByteBuffer dst = buffer(direct, DST_OFFSET + count * 8 + TAIL);
            ByteBuffer src = buffer(direct, SRC_OFFSET + count * 8 + TAIL);
            for (int i = 0; i < count; i++) {
                dst.putDouble(DST_OFFSET + 8 * i, doubleA(i));
                src.putDouble(SRC_OFFSET + 8 * i, doubleB(i));
            }
            Reduction.add(ElementType.DOUBLE, dst, DST_OFFSET, src, SRC_OFFSET, count);
            for (int i = 0; i < count; i++) {
                double expected = doubleA(i) + doubleB(i);
                assertEquals(Double.doubleToRawLongBits(expected),
                        Double.doubleToRawLongBits(dst.getDouble(DST_OFFSET + 8 * i)),
                        "element " + i + " (direct " + direct + ")");
                assertEquals(doubleB(i), src.getDouble(SRC_OFFSET + 8 * i), "source element " + i + " is unchanged");
            }
            assertGuards(dst, DST_OFFSET, DST_OFFSET + 8 * count);
            assertGuards(src, SRC_OFFSET, SRC_OFFSET + 8 * count);
        }
    }

    @Test
    void addWithinOneBuffer() {
        // The star's rank 0 adds a received chunk into its bucket; both may be regions of one buffer.
        ByteBuffer buffer = buffer(true, 64);
        for (int i = 0; i < 4; i++) {
            buffer.putFloat(4 * i, i + 1);        // 1 2 3 4
            buffer.putFloat(32 + 4 * i, 10 * (i + 1)); // 10 20 30 40
        }
        Reduction.add(ElementType.FLOAT, buffer, 0, buffer, 32, 4);
        for (int i = 0; i < 4; i++) {
            assertEquals(11f * (i + 1), buffer.getFloat(4 * i));
            assertEquals(10f * (i + 1), buffer.getFloat(32 + 4 * i));
        }
    }

    @Test
    void addKeepsSpecialValues() {
        ByteBuffer dst = buffer(false, 16);
        ByteBuffer src = buffer(false, 16);
        dst.putFloat(0, Float.POSITIVE_INFINITY).putFloat(4, Float.NaN).putFloat(8, -0f).putFloat(12, Float.MAX_VALUE);
        src.putFloat(0, 1f).putFloat(4, 1f).putFloat(8, -0f).putFloat(12, Float.MAX_VALUE);
        Reduction.add(ElementType.FLOAT, dst, 0, src, 0, 4);
        assertEquals(Float.POSITIVE_INFINITY, dst.getFloat(0));
        assertEquals(Float.NaN, dst.getFloat(4));
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(dst.getFloat(8)));
        assertEquals(Float.POSITIVE_INFINITY, dst.getFloat(12));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 1000, 1025})
    void divideFloats(int count) {
        for (int divisor : new int[] {1, 3, 7, 16}) {
            ByteBuffer buffer = buffer(true, DST_OFFSET + count * 4 + TAIL);
            for (int i = 0; i < count; i++) {
                buffer.putFloat(DST_OFFSET + 4 * i, floatA(i) + floatB(i));
            }
            Reduction.divide(ElementType.FLOAT, buffer, DST_OFFSET, count, divisor);
            for (int i = 0; i < count; i++) {
                float expected = (floatA(i) + floatB(i)) / divisor;
                assertEquals(Float.floatToRawIntBits(expected),
                        Float.floatToRawIntBits(buffer.getFloat(DST_OFFSET + 4 * i)),
                        "element " + i + " / " + divisor);
            }
            assertGuards(buffer, DST_OFFSET, DST_OFFSET + 4 * count);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 1000, 1025})
    void divideDoubles(int count) {
        for (int divisor : new int[] {1, 3, 7, 16}) {
            ByteBuffer buffer = buffer(false, SRC_OFFSET + count * 8 + TAIL);
            for (int i = 0; i < count; i++) {
                buffer.putDouble(SRC_OFFSET + 8 * i, doubleA(i) + doubleB(i));
            }
            Reduction.divide(ElementType.DOUBLE, buffer, SRC_OFFSET, count, divisor);
            for (int i = 0; i < count; i++) {
                double expected = (doubleA(i) + doubleB(i)) / divisor;
                assertEquals(Double.doubleToRawLongBits(expected),
                        Double.doubleToRawLongBits(buffer.getDouble(SRC_OFFSET + 8 * i)),
                        "element " + i + " / " + divisor);
            }
            assertGuards(buffer, SRC_OFFSET, SRC_OFFSET + 8 * count);
        }
    }

    @Test
    void divideGivesTheAverageOfIdenticalContributions() {
        // n ranks each contributing x, summed then divided by n, is x again for small n and exact x.
        ByteBuffer buffer = buffer(false, 24);
        double x = 0.75;
        buffer.putDouble(0, x + x + x).putDouble(8, 4.5).putDouble(16, -9);
        Reduction.divide(ElementType.DOUBLE, buffer, 0, 3, 3);
        assertEquals(0.75, buffer.getDouble(0));
        assertEquals(1.5, buffer.getDouble(8));
        assertEquals(-3.0, buffer.getDouble(16));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 1000, 1025})
    void copyMovesExactlyTheBytes(int length) {
        ByteBuffer src = buffer(false, SRC_OFFSET + length + TAIL);
        for (int i = 0; i < length; i++) {
            src.put(SRC_OFFSET + i, (byte) (i * 31 + 7));
        }
        ByteBuffer dst = buffer(true, DST_OFFSET + length + TAIL);
        src.position(3);
        dst.position(5);
        Reduction.copy(dst, DST_OFFSET, src, SRC_OFFSET, length);
        for (int i = 0; i < length; i++) {
            assertEquals((byte) (i * 31 + 7), dst.get(DST_OFFSET + i), "byte " + i);
        }
        assertGuards(dst, DST_OFFSET, DST_OFFSET + length);
        assertEquals(3, src.position());
        assertEquals(5, dst.position());
    }
}
