package io.ringstar.testing;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Tensors whose every element has a closed form, distinct per rank, tensor and index:
 * {@code value(rank, tensor, i) = rank + tensor/4 + (i mod 1021)/1024}. All such values and all
 * their sums over up to 16 ranks are exact in float, so the average over {@code n} ranks is exactly
 * {@code (n-1)/2 + tensor/4 + (i mod 1021)/1024} in float and double, whatever the order of the
 * additions: results can be compared bit for bit.
 */
public final class TensorFixtures {
    private TensorFixtures() {
    }

    public static double value(int rank, int tensor, long index) {
        return rank + tensor / 4.0 + (index % 1021) / 1024.0;
    }

    public static double average(int worldSize, int tensor, long index) {
        return (worldSize - 1) / 2.0 + tensor / 4.0 + (index % 1021) / 1024.0;
    }

    /**
     * A 'c'-order tensor of {@code shape} whose element at c-order index {@code i} is
     * {@code value(rank, tensor, i)}.
     */
    public static INDArray filled(DataType type, int rank, int tensor, long... shape) {
        long length = 1;
        for (long dimension : shape) {
            length *= dimension;
        }
        double[] values = new double[(int) length];
        for (int i = 0; i < values.length; i++) {
            values[i] = value(rank, tensor, i);
        }
        if (length == 0) {
            return Nd4j.create(type, shape, 'c');
        }
        if (shape.length == 0) {
            return Nd4j.scalar(type, values[0]);
        }
        return Nd4j.create(values, shape, 'c').castTo(type);
    }

    /**
     * The call's tensors for {@code count}: a vector of {@code count} elements, a 2x3 matrix in
     * 'f' order, a scalar, a strided view (a column of a 5x4 matrix whose other columns hold
     * junk) and an empty 0x3 matrix.
     */
    public static INDArray[] callTensors(DataType type, int rank, int count) {
        INDArray vector = filled(type, rank, 0, count);
        INDArray fortran = filled(type, rank, 1, 2, 3).dup('f');
        INDArray scalar = filled(type, rank, 2);
        INDArray holder = Nd4j.valueArrayOf(new long[] {5, 4}, -1000.0).castTo(type);
        INDArray column = holder.getColumn(1);
        column.assign(filled(type, rank, 3, 5));
        INDArray empty = filled(type, rank, 4, 0, 3);
        return new INDArray[] {vector, fortran, scalar, column, empty};
    }

    /** The elements of {@code array} in c order as doubles (exact for float and double). */
    public static double[] values(INDArray array) {
        if (array.length() == 0) {
            return new double[0];
        }
        return array.dup('c').reshape(array.length()).toDoubleVector();
    }

    /** Deep copies, to check later that inputs were not modified. */
    public static INDArray[] copies(INDArray[] tensors) {
        INDArray[] copies = new INDArray[tensors.length];
        for (int i = 0; i < tensors.length; i++) {
            copies[i] = tensors[i].dup('c');
        }
        return copies;
    }
}
