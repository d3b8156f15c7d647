package io.ringstar.bench;

import io.ringstar.config.Compression;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Input values that differ per rank and per element, and whose average, broadcast, gather and
 * scattered average have a closed form that floating point computes exactly, so results are checked with {@code ==}.
 *
 * <p>Rank {@code r} holds {@code value(r, i) = r + (i mod 1021) / 1024}. Every such value and
 * every partial sum over ranks is a multiple of 1/1024 far below 2^13, so it needs fewer than 24
 * significant bits and float additions are exact in any order. The average is
 * {@code (n-1)/2 + (i mod 1021)/1024}, also exactly representable, and IEEE division rounds
 * correctly, so dividing the exact sum by {@code n} gives it exactly for any {@code n}. The
 * period 1021 (a prime) makes misplaced chunks or segments show up as wrong values.
 *
 * <p>With compression the averages are not exact. With {@code fp16} or {@code bf16} an average is
 * right when it is within the bound the library documents ({@code (n+2)·u} times the average
 * magnitude of the inputs, u the half type's unit roundoff); the {@code topk} results depend on
 * what earlier calls left unsent, have no closed form here and are not checked: their count is -1
 * (the library's tests check top-k against its own closed forms).
 */
final class ClosedFormPattern {
    private static final int PERIOD = 1021;
    private static final double STEP = 1.0 / 1024;

    private ClosedFormPattern() {
    }

    static double value(int rank, long index) {
        return rank + (index % PERIOD) * STEP;
    }

    /** What every rank must get back from an aggregator's {@code operation} at element {@code index}. */
    static double expected(Operation operation, int worldSize, long index) {
        return expected(operation, worldSize, 0, 0, index);
    }

    /**
     * What rank {@code rank} must get back from {@code operation} at element {@code index} of its
     * result, when each rank's input holds {@code inputElements} of its values: the average
     * {@code (n-1)/2 + (i mod 1021)/1024} for the all-reduces; rank 0's values for broadcast; for
     * the reduce to rank 0, the average on rank 0 and the rank's own input elsewhere; for
     * all-gather, element {@code r·m + i} is rank r's value i; for reduce-scatter, element i is the
     * average's element {@code rank·m + i}, with m the share of each rank.
     */
    static double expected(Operation operation, int worldSize, int rank, long inputElements, long index) {
        return switch (operation) {
            case REDUCE, REDUCE_INTO, ALL_REDUCE -> average(worldSize, index);
            case BROADCAST, COMM_BROADCAST -> value(Operation.ROOT, index);
            case COMM_REDUCE -> rank == Operation.ROOT ? average(worldSize, index) : value(rank, index);
            case ALL_GATHER -> value(Math.toIntExact(index / inputElements), index % inputElements);
            case REDUCE_SCATTER -> average(worldSize, rank * (inputElements / worldSize) + index);
        };
    }

    private static double average(int worldSize, long index) {
        return (worldSize - 1) / 2.0 + (index % PERIOD) * STEP;
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

    /** How many elements of {@code result} differ from what an aggregator's {@code operation} must produce. */
    static long countWrong(INDArray result, ElementType type, Operation operation, int worldSize,
            Compression compression) {
        return countWrong(result, type, operation, worldSize, 0, 0, compression);
    }

    /**
     * How many elements of rank {@code rank}'s {@code result} differ from what {@code operation}
     * must produce (see {@link #expected(Operation, int, int, long, long)}); a result of the wrong
     * length counts every expected element as wrong.
     */
    static long countWrong(INDArray result, ElementType type, Operation operation, int worldSize, int rank,
            long inputElements, Compression compression) {
        boolean compressed = (operation == Operation.REDUCE || operation == Operation.REDUCE_INTO
                || operation == Operation.ALL_REDUCE)
                && compression.kind() != Compression.Kind.NONE;
        if (compressed && compression.kind() == Compression.Kind.TOPK) {
            return -1;
        }
        double unitRoundoff = !compressed ? 0 : compression.kind() == Compression.Kind.FP16 ? 0x1p-11 : 0x1p-8;
        long count = result.length();
        long expectedCount = operation.communicator() ? resultElements(operation, worldSize, inputElements) : count;
        if (count != expectedCount) {
            return Math.max(count, expectedCount);
        }
        ByteBuffer bytes = contents(result);
        long wrong = 0;
        for (int i = 0; i < count; i++) {
            double expected = expected(operation, worldSize, rank, inputElements, i);
            double actual = type == ElementType.FLOAT ? bytes.getFloat(i * Float.BYTES)
                    : bytes.getDouble(i * Double.BYTES);
            boolean right = compressed ? Math.abs(actual - expected) <= (worldSize + 2) * unitRoundoff * expected
                    : type == ElementType.FLOAT ? (float) actual == (float) expected : actual == expected;
            if (!right) {
                wrong++;
            }
        }
        return wrong;
    }

    /** Elements of a communicator call's result for inputs of {@code inputElements} each. */
    private static long resultElements(Operation operation, int worldSize, long inputElements) {
        return switch (operation) {
            case ALL_GATHER -> inputElements * worldSize;
            case REDUCE_SCATTER -> inputElements / worldSize;
            default -> inputElements;
        };
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
