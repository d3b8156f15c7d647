package io.ringstar.bench;

import io.ringstar.tensor.ElementType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Input values that differ per rank and per element, and whose average and broadcast have a
 * closed form that floating point computes exactly, so results are checked with {@code ==}.
 *
 * <p>Rank {@code r} holds {@code value(r, i) = r + (i mod 1021) / 1024}. Every such value and
 * every partial sum over ranks is a multiple of 1/1024 far below 2^13, so it needs fewer than 24
 * significant bits and float additions are exact in any order. The average is
 * {@code (n-1)/2 + (i mod 1021)/1024}, also exactly representable, and IEEE division rounds
 * correctly, so dividing the exact sum by {@code n} gives it exactly for any {@code n}. The
 * period 1021 (a prime) makes misplaced chunks or segments show up as wrong values.
 */
final class ClosedFormPattern {
    private static final int PERIOD = 1021;
    private static final double STEP = 1.0 / 1024;

    private ClosedFormPattern() {
    }

    static double value(int rank, long index) {
        return rank + (index % PERIOD) * STEP;
    }

    /** What every rank must get back from {@code operation} at element {@code index}. */
    static double expected(Operation operation, int worldSize, long index) {
        return switch (operation) {
            case REDUCE -> (worldSize - 1) / 2.0 + (index % PERIOD) * STEP;
            case BROADCAST -> value(0, index);
        };
    }

    /** A new vector of {@code count} elements holding rank {@code rank}'s values; the caller closes it. */
    static INDArray create(ElementType type, int rank, int count) {
        INDArray array = Nd4j.create(type.dataType(), count);
        ByteBuffer bytes = contents(array);
        for (int i = 0; i < count; i++) {
            if (type == ElementType.FLOAT) {
                bytes.putFloat(i * Float.BYTES, (float) value(rank, i));
            } else {
                bytes.putDouble(i * Double.BYTES, value(rank, i));
            }
        }
        return array;
    }

    /** How many elements of {@code result} differ from what {@code operation} must produce. */
    static long countWrong(INDArray result, ElementType type, Operation operation, int worldSize) {
        ByteBuffer bytes = contents(result);
        long count = result.length();
        long wrong = 0;
        for (int i = 0; i < count; i++) {
            double expected = expected(operation, worldSize, i);
            boolean right = type == ElementType.FLOAT
                    ? bytes.getFloat(i * Float.BYTES) == (float) expected
                    : bytes.getDouble(i * Double.BYTES) == expected;
            if (!right) {
                wrong++;
            }
        }
        return wrong;
    }

    /** The array's elements as a little-endian buffer starting at element 0; the array must be dense. */
    private static ByteBuffer contents(INDArray array) {
        if (array.length() > 1 && (array.ordering() != 'c' || array.elementWiseStride() != 1)) {
            throw new IllegalArgumentException("expected a dense 'c'-order array, got " + array.shapeInfoToString());
        }
        ByteBuffer whole = array.data().asNio().order(ByteOrder.LITTLE_ENDIAN);
        int start = Math.toIntExact(array.offset() * array.data().getElementSize());
        return whole.position(start).slice().order(ByteOrder.LITTLE_ENDIAN);
    }
}
