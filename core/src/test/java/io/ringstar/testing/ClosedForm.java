package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Checks a call's results against the closed form of {@link TensorFixtures}: the count of results,
 * each one's shape and type, and every element bit for bit. Shared by the aggregator conformance
 * suite and the transports' own loss and multi-process tests, so that they all check as much.
 */
public final class ClosedForm {
    private ClosedForm() {
    }

    /** The closed form of element {@code index} (c order) of tensor {@code tensor}. */
    @FunctionalInterface
    public interface Expected {
        double at(int tensor, long index);
    }

    /**
     * Fails (with an {@link AssertionError}) unless {@code results} has one tensor per tensor of
     * {@code shapes}, each of that shape and of {@code type}, and every element is
     * {@code expected}, rounded to float for {@link DataType#FLOAT}.
     *
     * @return the results' elements by tensor, in c order, as doubles
     */
    public static double[][] check(String operation, int rank, INDArray[] results, INDArray[] shapes, DataType type,
            Expected expected) {
        assertEquals(shapes.length, results.length, operation + " result count on rank " + rank);
        double[][] all = new double[results.length][];
        for (int t = 0; t < results.length; t++) {
            INDArray result = results[t];
            assertNotNull(result, operation + " result " + t + " on rank " + rank);
            assertArrayEquals(shapes[t].shape(), result.shape(), operation + " shape of tensor " + t + " on rank "
                    + rank);
            assertEquals(type, result.dataType(), operation + " type of tensor " + t + " on rank " + rank);
            double[] actual = TensorFixtures.values(result);
            for (int i = 0; i < actual.length; i++) {
                double want = type == DataType.FLOAT ? (float) expected.at(t, i) : expected.at(t, i);
                // Bit for bit: the closed form is exact, so even the sign of a zero must match.
                if (Double.doubleToRawLongBits(actual[i]) != Double.doubleToRawLongBits(want)) {
                    fail(operation + " on rank " + rank + ": tensor " + t + " element " + i + " is " + actual[i]
                            + ", expected " + want);
                }
            }
            all[t] = actual;
        }
        return all;
    }

    /** The number of elements in {@code values}, as {@link #check} returns them. */
    public static long elements(double[][] values) {
        long count = 0;
        for (double[] tensor : values) {
            count += tensor.length;
        }
        return count;
    }
}
