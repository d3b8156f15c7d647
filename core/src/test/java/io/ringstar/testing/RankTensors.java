package io.ringstar.testing;

import static org.junit.jupiter.api.Assertions.fail;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.util.ArrayList;
import java.util.List;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One rank's tensors for one collective, filled with {@link CollectiveClosedForm#value}: any mix of
 * element types, shapes and layouts ('c', 'f', a scalar, a column of a wider matrix, a transposed
 * view, an empty array). Tensor {@code t} of the call takes the closed form's tensor index {@code t}.
 * Owns every array it made and frees them in {@link #close()}.
 */
final class RankTensors implements AutoCloseable {
    /** What fills the columns of a column view's matrix that are not the view: must never change. */
    static final double JUNK = -100;

    /** How a tensor lies in memory. */
    enum Kind {
        /** Its own 'c'-order array. */
        C,
        /** Its own 'f'-order array. */
        F,
        /** Column 1 of a [length, 4] 'c'-order matrix whose other columns hold {@link #JUNK}; shape [length]. */
        COLUMN,
        /** The transpose of a 'c'-order array of the reversed shape: a view, neither 'c' nor 'f' contiguous. */
        TRANSPOSED
    }

    /** One tensor of a call. */
    record Spec(ElementType type, Kind kind, long... shape) {
        long length() {
            long length = 1;
            for (long dimension : shape) {
                length *= dimension;
            }
            return length;
        }

        @Override
        public String toString() {
            return type + " " + kind + java.util.Arrays.toString(shape);
        }
    }

    final Spec[] specs;
    final INDArray[] tensors;
    private final INDArray[] holders;
    private final List<INDArray> owned = new ArrayList<>();

    /** Rank {@code rank}'s tensors of {@code specs} for {@code op} (null: broadcast values) over {@code worldSize}. */
    RankTensors(ReduceOp op, int worldSize, int rank, Spec... specs) {
        this.specs = specs;
        this.tensors = new INDArray[specs.length];
        this.holders = new INDArray[specs.length];
        try {
            for (int t = 0; t < specs.length; t++) {
                int tensor = t;
                Spec spec = specs[t];
                CollectiveClosedForm.Element element = i -> CollectiveClosedForm.value(op, spec.type(), worldSize, rank,
                        tensor, i);
                tensors[t] = make(spec, element, t);
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    private INDArray make(Spec spec, CollectiveClosedForm.Element element, int t) {
        INDArray made = CollectiveClosedForm.filled(spec.type(), element, spec.shape());
        switch (spec.kind()) {
            case C:
                return own(made);
            case F:
                try {
                    return own(made.dup('f'));
                } finally {
                    TensorMemory.close(made);
                }
            case COLUMN:
                try {
                    INDArray holder = own(CollectiveClosedForm.filled(spec.type(), i -> JUNK, spec.length(), 4));
                    holders[t] = holder;
                    INDArray column = holder.getColumn(1);
                    column.assign(made);
                    return column;
                } finally {
                    TensorMemory.close(made);
                }
            case TRANSPOSED:
                try {
                    INDArray reversed = own(made.transpose().dup('c'));
                    return reversed.transpose();
                } finally {
                    TensorMemory.close(made);
                }
            default:
                throw new IllegalArgumentException("no tensor of kind " + spec.kind());
        }
    }

    private INDArray own(INDArray array) {
        owned.add(array);
        return array;
    }

    /** Fails unless every column view's matrix still holds {@link #JUNK} outside the view. */
    void checkAroundViews(String what) {
        for (int t = 0; t < holders.length; t++) {
            if (holders[t] == null) {
                continue;
            }
            double[] values = CollectiveClosedForm.values(holders[t]);
            for (int i = 0; i < values.length; i++) {
                if (i % 4 != 1 && values[i] != JUNK) {
                    fail(what + ": tensor " + t + " (a column view) wrote element " + i + " of its matrix: "
                            + values[i]);
                }
            }
        }
    }

    @Override
    public void close() {
        owned.forEach(TensorMemory::close);
        owned.clear();
    }
}
