package io.ringstar.internal.tensor;

import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** New 'c'-order copies of tensors, for results that must never alias a caller's input. */
public final class TensorCopy {
    private TensorCopy() {
    }

    /**
     * A new 'c'-order array with {@code tensor}'s shape, type and values. ND4J's {@code dup}
     * returns the array itself when it is empty, so empty arrays are created anew here.
     */
    public static INDArray of(INDArray tensor) {
        if (tensor.isEmpty()) {
            return Nd4j.create(tensor.dataType(), tensor.shape(), 'c');
        }
        return tensor.dup('c');
    }
}
