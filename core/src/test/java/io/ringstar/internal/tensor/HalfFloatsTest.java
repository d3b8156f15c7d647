package io.ringstar.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link HalfFloats} against an independent reference: each format's values decoded from their
 * fields in exact decimal, and rounding judged by comparing the exact distances to the neighbours
 * of the result (nearest, ties to the even bit pattern).
 */
class HalfFloatsTest {

    /** The two formats: bits of the largest positive pattern (infinity), mantissa width, exponent bias. */
    enum Format {
        HALF(0x7C00, 10, 15), BFLOAT16(0x7F80, 7, 127);

        final int infinity;
        final int mantissaBits;
        final int bias;

        Format(int infinity, int mantissaBits, int bias) {
            this.infinity = infinity;
            this.mantissaBits = mantissaBits;
            this.bias = bias;
        }

        float toFloat(short bits) {
            return this == HALF ? HalfFloats.halfToFloat(bits) : HalfFloats.bfloat16ToFloat(bits);
        }

        short fromFloat(float value) {
            return this == HALF ? HalfFloats.floatToHalf(value) : HalfFloats.floatToBfloat16(value);
        }

        boolean isNaN(int bits) {
            return (bits & infinity) == infinity && (bits & ((1 << mantissaBits) - 1)) != 0;
        }

        /**
         * The exact value of a positive pattern up to {@code infinity}, from its fields; infinity's
         * pattern decodes as the power of two above the largest finite value, which is where
         * rounding sends the values past the midpoint.
         */
        BigDecimal value(int magnitude) {
            int exponent = magnitude >>> mantissaBits;
            int mantissa = magnitude & ((1 << mantissaBits) - 1);
            if (exponent == 0) {
                return scaled(mantissa, 1 - bias - mantissaBits);
            }
            return scaled(mantissa + (1 << mantissaBits), exponent - bias - mantissaBits);
        }
    }

    private static BigDecimal scaled(long integer, int powerOfTwo) {
        BigDecimal value = BigDecimal.valueOf(integer);
        BigDecimal two = BigDecimal.valueOf(2);
        return powerOfTwo >= 0 ? value.multiply(two.pow(powerOfTwo)) : value.divide(two.pow(-powerOfTwo));
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void everyPatternWidensExactlyAndRoundTrips(Format format) {
        for (int bits = 0; bits < 1 << 16; bits++) {
            short pattern = (short) bits;
            float wide = format.toFloat(pattern);
            String context = format + " " + Integer.toHexString(bits);
            int magnitude = bits & 0x7FFF;
            boolean negative = (bits & 0x8000) != 0;
            if (format.isNaN(bits)) {
                assertTrue(Float.isNaN(wide), context);
                int back = format.fromFloat(wide) & 0xFFFF;
                assertTrue(format.isNaN(back), context + " came back as " + Integer.toHexString(back));
                assertEquals(bits & 0x8000, back & 0x8000, context + ": the sign of a NaN");
                continue;
            }
            assertEquals(negative, (Float.floatToRawIntBits(wide) & 0x80000000) != 0, context + ": the sign");
            if (magnitude == format.infinity) {
                assertEquals(negative ? Float.NEGATIVE_INFINITY : Float.POSITIVE_INFINITY, wide, context);
            } else {
                assertEquals(0, format.value(magnitude).compareTo(new BigDecimal(Math.abs(wide))), context);
            }
            assertEquals(bits, format.fromFloat(wide) & 0xFFFF, context + " round trip");
        }
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void everyFloatRoundsToTheNearestPatternTiesToEven(Format format) {
        for (float value : floatsToRound(format)) {
            int bits = format.fromFloat(value) & 0xFFFF;
            String context = format + " of " + value + " (" + Integer.toHexString(Float.floatToRawIntBits(value))
                    + ") is " + Integer.toHexString(bits);
            if (Float.isNaN(value)) {
                assertTrue(format.isNaN(bits), context);
                continue;
            }
            assertEquals((Float.floatToRawIntBits(value) >>> 31) << 15, bits & 0x8000, context + ": the sign");
            int magnitude = bits & 0x7FFF;
            assertTrue(magnitude <= format.infinity, context);
            if (Float.isInfinite(value)) {
                assertEquals(format.infinity, magnitude, context);
                continue;
            }
            BigDecimal exact = new BigDecimal(Math.abs(value));
            BigDecimal distance = exact.subtract(format.value(magnitude)).abs();
            for (int neighbour : new int[] {magnitude - 1, magnitude + 1}) {
                if (neighbour < 0 || neighbour > format.infinity) {
                    continue;
                }
                int comparison = distance.compareTo(exact.subtract(format.value(neighbour)).abs());
                assertTrue(comparison < 0 || (comparison == 0 && (magnitude & 1) == 0),
                        context + ": " + Integer.toHexString(neighbour) + " is nearer, or as near and even");
            }
        }
    }

    /**
     * Every midpoint between neighbouring patterns (the ties) and the floats on either side of
     * it, the patterns themselves, the edges (the largest finite value, the overflow threshold,
     * the subnormals, the smallest floats), and random floats of every exponent.
     */
    private static List<Float> floatsToRound(Format format) {
        List<Float> floats = new ArrayList<>();
        IntFunction<Float> pattern = bits -> format.toFloat((short) bits);
        for (int magnitude = 0; magnitude < format.infinity; magnitude++) {
            float low = pattern.apply(magnitude);
            // Past the largest finite value, the power of two that infinity's pattern stands for.
            double high = magnitude + 1 == format.infinity ? Math.scalb(1.0, format == Format.HALF ? 16 : 128)
                    : pattern.apply(magnitude + 1);
            float midpoint = (float) ((low + high) / 2);
            for (float value : new float[] {low, midpoint, Math.nextUp(midpoint), Math.nextDown(midpoint)}) {
                floats.add(value);
                floats.add(-value);
            }
        }
        float[] edges = {65504f, 65519.996f, 65520f, 65535f, 65536f, 1e9f, Float.MAX_VALUE, Float.MIN_VALUE,
            Float.MIN_NORMAL, 0x1p-24f, 0x1p-25f, 0x1.8p-24f, 0x1.8p-25f, 0x1p-26f, 0x1p-14f, 0x1.ff8p-15f,
            0x1.ffcp-15f, Float.POSITIVE_INFINITY, Float.NaN, Float.intBitsToFloat(0x7F800001),
            Float.intBitsToFloat(0xFFC12345), 0x1.fffffep127f, 0x1.ff8p127f, 0x1.fe8p127f};
        for (float edge : edges) {
            floats.add(edge);
            floats.add(-edge);
        }
        SplittableRandom random = new SplittableRandom(16);
        for (int i = 0; i < 50_000; i++) {
            floats.add(Float.intBitsToFloat(random.nextInt()));
        }
        return floats;
    }
}
