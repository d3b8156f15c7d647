package io.ringstar.internal.tensor;

import java.nio.ByteBuffer;
import org.bytedeco.javacpp.BytePointer;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The raw memory of tensors, for code outside this package that moves their elements as bytes
 * (checkpoint files) without touching ND4J itself. Byte views are in the machine's order; their
 * callers check that it is little-endian. A byte view borrows the tensor's memory and is valid
 * only while the tensor is open; arrays made here belong to the caller. Nothing here blocks.
 */
public final class TensorMemory {
    private TensorMemory() {
    }

    /**
     * True if the tensor's elements, read in 'c' order, are consecutive in its buffer: element-wise
     * stride 1 and 'c' order, or at most one dimension longer than 1 (where order makes no
     * difference). ND4J reports 'c' order for strides that are neither 'c' nor 'f' (a permuted
     * array, say), and such an array is no view when it spans its whole buffer; only the
     * element-wise stride tells it apart.
     */
    public static boolean isLinearInCOrder(INDArray tensor) {
        if (tensor.isEmpty() || tensor.rank() == 0 || tensor.elementWiseStride() != 1) {
            return false;
        }
        if (tensor.ordering() == 'c') {
            return true;
        }
        int longDimensions = 0;
        for (long dimension : tensor.shape()) {
            if (dimension > 1) {
                longDimensions++;
            }
        }
        return longDimensions <= 1;
    }

    /**
     * {@code tensor} itself if {@link #isLinearInCOrder} holds, else a new 'c'-order copy, which
     * the caller closes with {@link #closeIfCopy}.
     */
    public static INDArray linearInCOrder(INDArray tensor) {
        return isLinearInCOrder(tensor) ? tensor : TensorCopy.of(tensor);
    }

    /** Closes {@code linear} if {@link #linearInCOrder} made it for {@code tensor}. */
    public static void closeIfCopy(INDArray tensor, INDArray linear) {
        if (linear != tensor) {
            close(linear);
        }
    }

    /**
     * Bytes {@code [fromByte, fromByte + bytes)} of the elements of a tensor that {@link
     * #isLinearInCOrder} holds for (or a rank-0 copy of its own), as a view of its memory, not a
     * copy. The view starts from the address rather than from {@code asNio()}, whose int-indexed
     * buffer cannot reach past 2 GiB of a large tensor.
     */
    public static ByteBuffer bytes(INDArray linear, long fromByte, int bytes) {
        // addressPointer() already points at a view's first element.
        BytePointer start = new BytePointer(linear.data().addressPointer()).getPointer(BytePointer.class, fromByte);
        return start.capacity(bytes).asByteBuffer();
    }

    /**
     * A new array of {@code type} and {@code shape} in 'c' order, detached from any workspace
     * (it belongs to the caller, who may keep it past any scope); its elements are not set unless
     * it is empty. Its memory may be filled through {@link #bytes}.
     */
    public static INDArray newDetached(ElementType type, long[] shape) {
        for (long dimension : shape) {
            if (dimension == 0) {
                return Nd4j.create(type.dataType(), shape, 'c');
            }
        }
        return Nd4j.createUninitializedDetached(type.dataType(), 'c', shape);
    }

    /**
     * Frees the tensor's memory now if ND4J lets it be closed (a view does not own its buffer);
     * null is ignored, so a {@code finally} may pass a tensor that was never made.
     */
    public static void close(INDArray tensor) {
        if (tensor != null && tensor.closeable()) {
            tensor.close();
        }
    }

    /** {@link #close(INDArray)} for each tensor. */
    public static void close(INDArray... tensors) {
        for (INDArray tensor : tensors) {
            close(tensor);
        }
    }
}
