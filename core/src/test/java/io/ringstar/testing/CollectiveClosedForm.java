package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Inputs of the communicator's collectives whose every element has a closed form per op, element
 * type, world size, rank, tensor and index, chosen so that every partial result of every op is
 * exact in every type (HALF has 11 significant bits, BFLOAT16 8): the expected result is then
 * exact whatever order the algorithm combines in, and results are compared bit for bit.
 *
 * <ul>
 *   <li>SUM and the values of broadcast and all-gather (op {@code null}): integers in [-3, 10]
 *       plus, for floating types, a half; every subset sum of 8 ranks stays below 64 in magnitude.
 *       LONG adds {@code (rank + 1) · 2^33}, beyond 32 bits and still exact as a double.</li>
 *   <li>AVG (floating types only): {@code c(i) + rank - (n-1)/2} with {@code c(i)} a multiple of
 *       1/4 in [-1, 1]; the rank terms cancel, so the average is exactly {@code c(i)}.</li>
 *   <li>PROD: values in {1, -1, 2, 1/2, -2, -1/2, 0} (integers: no halves), so every product is a
 *       signed power of two or zero; LONG multiplies rank 0's by 2^31.</li>
 *   <li>MIN and MAX: integers in [-5, 5] plus a multiple of 1/4 for floating types; LONG scales
 *       them by 2^33 and adds the rank.</li>
 * </ul>
 */
public final class CollectiveClosedForm {
    private static final double TWO_TO_33 = 0x1p33;
    private static final double[] FLOAT_FACTORS = {1, -1, 2, 0.5, -2, 1, -0.5, 0};
    private static final double[] INTEGER_FACTORS = {1, -1, 2, 1, -2, 1, -1, 0};

    private CollectiveClosedForm() {
    }

    /** Rank {@code rank}'s element {@code i} (c order) of tensor {@code tensor}; op null for broadcast values. */
    public static double value(ReduceOp op, ElementType type, int worldSize, int rank, int tensor, long i) {
        boolean floating = type.isFloatingPoint();
        int k = (int) (i % 1021);
        if (op == null || op == ReduceOp.SUM) {
            double base = (k + 3 * tensor) % 7 - 3 + rank + (floating ? ((rank + tensor + k) % 2) / 2.0 : 0);
            return type == ElementType.LONG ? base + (rank + 1) * TWO_TO_33 : base;
        }
        switch (op) {
            case AVG:
                return ((k + tensor) % 9 - 4) / 4.0 + rank - (worldSize - 1) / 2.0;
            case PROD:
                double factor = (floating ? FLOAT_FACTORS : INTEGER_FACTORS)[(rank * 3 + k + tensor) % 8];
                return type == ElementType.LONG && rank == 0 ? factor * 0x1p31 : factor;
            case MIN:
            case MAX:
                double spread = (rank * 5 + k * 3 + tensor) % 11 - 5 + (floating ? ((rank + k) % 4) / 4.0 : 0);
                return type == ElementType.LONG ? spread * TWO_TO_33 + rank : spread;
            default:
                throw new IllegalArgumentException("no closed form for " + op);
        }
    }

    /** The exact reduction over {@code worldSize} ranks of element {@code i} of tensor {@code tensor}. */
    public static double expected(ReduceOp op, ElementType type, int worldSize, int tensor, long i) {
        double result = value(op, type, worldSize, 0, tensor, i);
        for (int rank = 1; rank < worldSize; rank++) {
            double next = value(op, type, worldSize, rank, tensor, i);
            switch (op) {
                case SUM:
                case AVG:
                    result += next;
                    break;
                case PROD:
                    result *= next;
                    break;
                case MIN:
                    result = Math.min(result, next);
                    break;
                case MAX:
                    result = Math.max(result, next);
                    break;
                default:
                    throw new IllegalArgumentException("no closed form for " + op);
            }
        }
        if (op == ReduceOp.AVG) {
            result /= worldSize;
        }
        // An integer has no negative zero (a product with a zero and a -1 reads back as +0).
        return type.isFloatingPoint() ? result : result + 0.0;
    }

    /** The closed form of a whole tensor, by c-order index. */
    @FunctionalInterface
    public interface Element {
        double at(long i);
    }

    /**
     * A new 'c'-order tensor of {@code type} and {@code shape} whose c-order element {@code i} is
     * {@code element.at(i)}; the caller closes it.
     */
    public static INDArray filled(ElementType type, Element element, long... shape) {
        long length = 1;
        for (long dimension : shape) {
            length *= dimension;
        }
        if (length == 0) {
            return Nd4j.create(type.dataType(), shape, 'c');
        }
        double[] values = new double[Math.toIntExact(length)];
        for (int i = 0; i < values.length; i++) {
            values[i] = element.at(i);
        }
        INDArray doubles = shape.length == 0 ? Nd4j.scalar(DataType.DOUBLE, values[0])
                : Nd4j.create(values, shape, 'c');
        INDArray cast = doubles.castTo(type.dataType());
        if (cast != doubles) {
            TensorMemory.close(doubles);
        }
        return cast;
    }

    /** The elements of {@code array} in c order as doubles (exact for every type here); frees its copies. */
    public static double[] values(INDArray array) {
        if (array.length() == 0) {
            return new double[0];
        }
        INDArray copy = array.dup('c');
        try {
            INDArray doubles = copy.castTo(DataType.DOUBLE);
            try {
                return doubles.data().asDouble();
            } finally {
                if (doubles != copy) {
                    TensorMemory.close(doubles);
                }
            }
        } finally {
            TensorMemory.close(copy);
        }
    }

    /**
     * Fails unless {@code actual} has {@code shape} and {@code type} and its c-order element
     * {@code i} is {@code element.at(i)}, bit for bit (the sign of a zero included).
     *
     * @param what names the call, the rank and the tensor in the failure message
     * @return the elements, for comparing ranks with each other
     */
    public static double[] check(String what, INDArray actual, ElementType type, long[] shape, Element element) {
        assertNotNull(actual, what);
        assertArrayEquals(shape, actual.shape(), what + ": shape");
        assertEquals(type.dataType(), actual.dataType(), what + ": type");
        double[] values = values(actual);
        for (int i = 0; i < values.length; i++) {
            double want = element.at(i);
            if (Double.doubleToRawLongBits(values[i]) != Double.doubleToRawLongBits(want)) {
                fail(what + ": element " + i + " is " + values[i] + ", expected " + want);
            }
        }
        return values;
    }

    /** Fails unless {@code a} and {@code b} are the same bits. */
    public static void assertBitIdentical(double[] a, double[] b, String what) {
        assertEquals(a.length, b.length, what + ": length");
        for (int i = 0; i < a.length; i++) {
            if (Double.doubleToRawLongBits(a[i]) != Double.doubleToRawLongBits(b[i])) {
                fail(what + " differ at element " + i + ": " + a[i] + " vs " + b[i]);
            }
        }
    }
}
