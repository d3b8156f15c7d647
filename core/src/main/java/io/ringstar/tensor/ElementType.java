package io.ringstar.tensor;

import org.nd4j.linalg.api.buffer.DataType;

/** The element types ringstar reduces, with their wire code and size. */
public enum ElementType {
    FLOAT(1, Float.BYTES, DataType.FLOAT),
    DOUBLE(2, Double.BYTES, DataType.DOUBLE);

    private final int code;
    private final int bytes;
    private final DataType dataType;

    ElementType(int code, int bytes, DataType dataType) {
        this.code = code;
        this.bytes = bytes;
        this.dataType = dataType;
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

    /** The constants, in one array for lookups that allocate nothing ({@code values()} copies). */
    private static final ElementType[] ALL = values();

    /** The element type of an ND4J data type, or {@code null} if ringstar does not reduce it. */
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
