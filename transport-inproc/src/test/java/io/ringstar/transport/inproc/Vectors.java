package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.fail;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;

/**
 * The values of the algorithm tests and their closed forms. Rank {@code r}'s element {@code i} is
 * {@link #value} (one of 1, -1, 2, -2, 3, -3), so that every sum and average over up to eight
 * ranks is exact in every type, and every product in FLOAT, DOUBLE, INT and LONG (not in the 16-bit
 * types, whose products the tests leave out), and a result can be checked bit for bit.
 */
final class Vectors {
    private Vectors() {
    }

    /** Rank {@code rank}'s element {@code index}. */
    static double value(int rank, long index) {
        int k = (int) ((index * 5 + rank * 3L + index / 11) % 6);
        return (k / 2 + 1) * (k % 2 == 0 ? 1 : -1);
    }

    /** The reduction with {@code op} over ranks {@code 0..n-1} of element {@code index}, rounded as the kernels do. */
    static double expected(ReduceOp op, ElementType type, int worldSize, long index) {
        double acc = value(0, index);
        for (int r = 1; r < worldSize; r++) {
            double v = value(r, index);
            switch (op) {
                case SUM:
                case AVG:
                    acc += v;
                    break;
                case PROD:
                    acc *= v;
                    break;
                case MIN:
                    acc = Math.min(acc, v);
                    break;
                case MAX:
                    acc = Math.max(acc, v);
                    break;
                default:
                    throw new IllegalArgumentException(op.toString());
            }
        }
        if (op != ReduceOp.AVG) {
            return acc;
        }
        // Float and the 16-bit types divide in float (the 16-bit ones then round once); doubles in double.
        return type == ElementType.DOUBLE ? acc / worldSize : (double) ((float) acc / (float) worldSize);
    }

    /** A little-endian direct buffer of {@code count} elements of {@code type}, each {@code fill}. */
    static ByteBuffer allocate(ElementType type, long count, double fill) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(Math.toIntExact(count * type.bytes()))
                .order(ByteOrder.LITTLE_ENDIAN);
        for (long i = 0; i < count; i++) {
            put(type, buffer, i, fill);
        }
        return buffer;
    }

    /** A buffer holding rank {@code rank}'s elements {@code [from, from + count)} of {@link #value}. */
    static ByteBuffer values(ElementType type, int rank, long from, long count) {
        ByteBuffer buffer = allocate(type, count, 0);
        for (long i = 0; i < count; i++) {
            put(type, buffer, i, value(rank, from + i));
        }
        return buffer;
    }

    static void put(ElementType type, ByteBuffer buffer, long index, double value) {
        int at = Math.toIntExact(index * type.bytes());
        switch (type) {
            case FLOAT:
                buffer.putFloat(at, (float) value);
                break;
            case DOUBLE:
                buffer.putDouble(at, value);
                break;
            case INT:
                buffer.putInt(at, (int) value);
                break;
            case LONG:
                buffer.putLong(at, (long) value);
                break;
            case HALF:
                buffer.putShort(at, HalfFloats.floatToHalf((float) value));
                break;
            case BFLOAT16:
                buffer.putShort(at, HalfFloats.floatToBfloat16((float) value));
                break;
            default:
                throw new IllegalArgumentException(type.toString());
        }
    }

    /** The raw bits of element {@code index}, widened to a long. */
    static long bits(ElementType type, ByteBuffer buffer, long index) {
        int at = Math.toIntExact(index * type.bytes());
        switch (type) {
            case FLOAT:
                return Float.floatToRawIntBits(buffer.getFloat(at));
            case DOUBLE:
                return Double.doubleToRawLongBits(buffer.getDouble(at));
            case INT:
                return buffer.getInt(at);
            case LONG:
                return buffer.getLong(at);
            case HALF:
            case BFLOAT16:
                return buffer.getShort(at);
            default:
                throw new IllegalArgumentException(type.toString());
        }
    }

    /** The raw bits {@code value} has as an element of {@code type}. */
    static long bitsOf(ElementType type, double value) {
        switch (type) {
            case FLOAT:
                return Float.floatToRawIntBits((float) value);
            case DOUBLE:
                return Double.doubleToRawLongBits(value);
            case INT:
                return (int) value;
            case LONG:
                return (long) value;
            case HALF:
                return HalfFloats.floatToHalf((float) value);
            case BFLOAT16:
                return HalfFloats.floatToBfloat16((float) value);
            default:
                throw new IllegalArgumentException(type.toString());
        }
    }

    /** What the closed form gives for element {@code index} of a buffer. */
    @FunctionalInterface
    interface Closed {
        double at(long index);
    }

    /** Fails unless elements {@code [0, count)} of {@code buffer} are {@code closed}, bit for bit. */
    static void check(String what, ElementType type, ByteBuffer buffer, long count, Closed closed) {
        for (long i = 0; i < count; i++) {
            long want = bitsOf(type, closed.at(i));
            long got = bits(type, buffer, i);
            if (got != want) {
                fail(what + ": element " + i + " of " + count + " " + type + " has bits " + Long.toHexString(got)
                        + ", expected " + Long.toHexString(want) + " (" + closed.at(i) + ")");
            }
        }
    }

    /** A checksum of the buffer's bytes, to compare results across ranks. */
    static long crc(ByteBuffer buffer) {
        CRC32 crc = new CRC32();
        crc.update(buffer.duplicate().clear());
        return crc.getValue();
    }
}
