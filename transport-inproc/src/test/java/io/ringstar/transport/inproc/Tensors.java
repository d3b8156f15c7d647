package io.ringstar.transport.inproc;

import java.util.Arrays;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** Flat float values to FLOAT tensors of given shapes ('c' order, one after another) and back. */
final class Tensors {
    private Tensors() {
    }

    static INDArray[] of(float[] values, long[][] shapes) {
        INDArray[] tensors = new INDArray[shapes.length];
        int at = 0;
        for (int i = 0; i < shapes.length; i++) {
            int length = (int) Arrays.stream(shapes[i]).reduce(1, (a, b) -> a * b);
            tensors[i] = Nd4j.create(Arrays.copyOfRange(values, at, at + length), shapes[i], 'c');
            at += length;
        }
        return tensors;
    }

    static float[] flat(INDArray[] tensors) {
        float[][] parts = new float[tensors.length][];
        int total = 0;
        for (int i = 0; i < tensors.length; i++) {
            parts[i] = tensors[i].dup('c').data().asFloat();
            total += parts[i].length;
        }
        float[] values = new float[total];
        int at = 0;
        for (float[] part : parts) {
            System.arraycopy(part, 0, values, at, part.length);
            at += part.length;
        }
        return values;
    }
}
