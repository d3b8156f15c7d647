package io.ringstar.internal.tensor;

/**
 * Conversions between float32 and the two 16-bit float formats, IEEE 754 binary16 ({@code HALF})
 * and bfloat16, with round-to-nearest-even, as the hardware does. JDK 17 has neither
 * ({@code Float.float16ToFloat} came in JDK 20). A NaN stays a quiet NaN; values past a format's
 * largest finite value round to infinity; binary16 subnormals are kept.
 */
public final class HalfFloats {
    private HalfFloats() {
    }

    /** The float32 value of binary16 bits {@code half} (exact: every binary16 value is a float32). */
    public static float halfToFloat(short half) {
        int bits = half & 0xFFFF;
        int sign = (bits & 0x8000) << 16;
        int exponent = (bits >>> 10) & 0x1F;
        int mantissa = bits & 0x3FF;
        if (exponent == 0x1F) {
            return Float.intBitsToFloat(sign | 0x7F800000 | (mantissa << 13));
        }
        if (exponent == 0) {
            // Zero or subnormal: mantissa * 2^-24, exact in float32.
            float magnitude = mantissa * 0x1p-24f;
            return sign != 0 ? -magnitude : magnitude;
        }
        return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }

    /** The binary16 bits nearest to {@code value} (ties to even). */
    public static short floatToHalf(float value) {
        int bits = Float.floatToRawIntBits(value);
        int sign = (bits >>> 16) & 0x8000;
        int magnitude = bits & 0x7FFFFFFF;
        if (magnitude >= 0x7F800000) {
            // Infinity, or a NaN kept quiet with the top of its payload.
            int nan = magnitude > 0x7F800000 ? 0x200 | ((magnitude >>> 13) & 0x3FF) : 0;
            return (short) (sign | 0x7C00 | nan);
        }
        if (magnitude >= 0x477FF000) {
            // 65520 and above: nearer to 2^16 than to 65504 (or a tie that goes to the even 2^16), so infinity.
            return (short) (sign | 0x7C00);
        }
        if (magnitude < 0x38800000) {
            // Below 2^-14, the smallest normal: a multiple of 2^-24. Scaling by 2^24 is exact, and rint
            // rounds ties to even; 1024 multiples is the smallest normal, whose bits are 0x400 indeed.
            int multiples = (int) Math.rint(Float.intBitsToFloat(magnitude) * 0x1p24);
            return (short) (sign | multiples);
        }
        int rounded = ((magnitude >>> 23) - 112) << 10 | ((magnitude >>> 13) & 0x3FF);
        int rest = magnitude & 0x1FFF;
        if (rest > 0x1000 || (rest == 0x1000 && (rounded & 1) != 0)) {
            rounded++; // a carry out of the mantissa correctly moves to the next exponent
        }
        return (short) (sign | rounded);
    }

    /** The float32 value of bfloat16 bits {@code bfloat} (exact). */
    public static float bfloat16ToFloat(short bfloat) {
        return Float.intBitsToFloat((bfloat & 0xFFFF) << 16);
    }

    /** The bfloat16 bits nearest to {@code value} (ties to even). */
    public static short floatToBfloat16(float value) {
        int bits = Float.floatToRawIntBits(value);
        if ((bits & 0x7FFFFFFF) > 0x7F800000) {
            return (short) ((bits >>> 16) | 0x40);
        }
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }
}
