package io.ringstar.internal.compression;

import io.ringstar.config.Compression;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.HalfFloats;
import java.nio.ByteBuffer;

/**
 * The conversions of {@code fp16} and {@code bf16} compression: FLOAT or DOUBLE values into a
 * buffer of 16-bit values, rounded to nearest even ({@link HalfFloats}), and back (exactly, since
 * every 16-bit value is a float). A DOUBLE is rounded to float32 first, then to 16 bits: each input
 * then carries a relative error of at most {@code u + 2^-24} (u = 2^-11 for fp16, 2^-8 for bf16),
 * rather than u. Values past the largest finite binary16 (65504) become infinities; bf16 has the
 * range of float32. Buffers are little-endian from the given byte offsets; nothing allocates.
 */
public final class HalfPrecision {
    private HalfPrecision() {
    }

    /** The element type a compression sends FLOAT and DOUBLE values as: HALF or BFLOAT16. */
    public static ElementType wireType(Compression compression) {
        switch (compression.kind()) {
            case FP16:
                return ElementType.HALF;
            case BF16:
                return ElementType.BFLOAT16;
            default:
                throw new IllegalArgumentException(compression + " does not send values in half precision");
        }
    }

    /**
     * Rounds {@code count} values of {@code type} (FLOAT or DOUBLE) from {@code source} into
     * {@code half} as {@code wire} (HALF or BFLOAT16).
     */
    public static void narrow(ElementType type, ElementType wire, ByteBuffer source, ByteBuffer half, int count) {
        boolean bfloat = checkWire(wire);
        boolean isDouble = isDouble(type);
        for (int i = 0; i < count; i++) {
            float value = isDouble ? (float) source.getDouble(i * Double.BYTES) : source.getFloat(i * Float.BYTES);
            half.putShort(i * 2, bfloat ? HalfFloats.floatToBfloat16(value) : HalfFloats.floatToHalf(value));
        }
    }

    /** Writes the {@code count} values of {@code half} (as {@code wire}) into {@code result} as {@code type}. */
    public static void widen(ElementType type, ElementType wire, ByteBuffer half, ByteBuffer result, int count) {
        boolean bfloat = checkWire(wire);
        boolean isDouble = isDouble(type);
        for (int i = 0; i < count; i++) {
            short bits = half.getShort(i * 2);
            float value = bfloat ? HalfFloats.bfloat16ToFloat(bits) : HalfFloats.halfToFloat(bits);
            if (isDouble) {
                result.putDouble(i * Double.BYTES, value);
            } else {
                result.putFloat(i * Float.BYTES, value);
            }
        }
    }

    private static boolean checkWire(ElementType wire) {
        if (wire != ElementType.HALF && wire != ElementType.BFLOAT16) {
            throw new IllegalArgumentException("not a 16-bit float type: " + wire);
        }
        return wire == ElementType.BFLOAT16;
    }

    private static boolean isDouble(ElementType type) {
        if (type != ElementType.FLOAT && type != ElementType.DOUBLE) {
            throw new IllegalArgumentException("only FLOAT and DOUBLE values are compressed, not " + type);
        }
        return type == ElementType.DOUBLE;
    }
}
