package io.ringstar.internal.tensor;

import org.nd4j.linalg.api.buffer.DataType;

/** The element types ringstar moves and reduces, with their wire code and size. */
public enum ElementType {
    FLOAT(1, Float.BYTES, DataType.FLOAT, true),
    DOUBLE(2, Double.BYTES, DataType.DOUBLE, true),
    /** IEEE 754 binary16; reduced in float32, rounded to nearest even once per value written. */
    HALF(3, 2, DataType.HALF, true),
    /** bfloat16 (the top half of a float32); reduced in float32, rounded to nearest even once per value written. */
    BFLOAT16(4, 2, DataType.BFLOAT16, true),
    /** 32-bit two's complement integers; sums and products wrap around. */
    INT(5, Integer.BYTES, DataType.INT, false),
    /** 64-bit two's complement integers; sums and products wrap around. */
    LONG(6, Long.BYTES, DataType.LONG, false);

    private final int code;
    private final int bytes;
    private final DataType dataType;
    private final boolean floatingPoint;

    ElementType(int code, int bytes, DataType dataType, boolean floatingPoint) {
        this.code = code;
        this.bytes = bytes;
        this.dataType = dataType;
        this.floatingPoint = floatingPoint;
    }

    /** The code written into byte 6 of the message header. */
    public int code() {
        return code;
    }

    /** Size of one element in bytes. */
    public int bytes() {
        return bytes;
    }

    /** The ND4J data type. */
    public DataType dataType() {
        return dataType;
    }

    /** Whether values of this type can be averaged (divided by the world size). */
    public boolean isFloatingPoint() {
        return floatingPoint;
    }

    /** The constants, in one array for lookups that allocate nothing ({@code values()} copies). */
    private static final ElementType[] ALL = values();

    /** The element type of an ND4J data type, or {@code null} if ringstar does not move it. */
    public static ElementType of(DataType dataType) {
        for (ElementType type : ALL) {
            if (type.dataType == dataType) {
                return type;
            }
        }
        return null;
    }

    /** The element type with this wire code, or {@code null}. */
    public static ElementType fromCode(int code) {
        for (ElementType type : ALL) {
            if (type.code == code) {
                return type;
            }
        }
        return null;
    }
}
