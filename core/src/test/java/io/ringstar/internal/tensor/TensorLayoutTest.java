package io.ringstar.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

class TensorLayoutTest {

    private static INDArray f(long... shape) {
        return Nd4j.create(DataType.FLOAT, shape);
    }

    private static INDArray d(long... shape) {
        return Nd4j.create(DataType.DOUBLE, shape);
    }

    private static TensorLayout layout(INDArray... tensors) {
        return TensorLayout.of("reduceGradients", 0, tensors);
    }

    /** FNV-1a over the little-endian bytes of each 64-bit word, as the fingerprint is specified. */
    private static long fnv1a(long... words) {
        long hash = 0xcbf29ce484222325L;
        for (long word : words) {
            for (int b = 0; b < 8; b++) {
                hash ^= (word >>> (8 * b)) & 0xFF;
                hash *= 0x100000001b3L;
            }
        }
        return hash;
    }

    @Test
    void groupsByElementTypeFloatBeforeDoubleWithOffsets() {
        TensorLayout layout = layout(d(4), f(2, 3), d(1, 2), f(5), f(0));
        assertEquals(5, layout.tensorCount());
        List<TensorLayout.Group> groups = layout.groups();
        assertEquals(2, groups.size());

        TensorLayout.Group floats = groups.get(0);
        assertSame(ElementType.FLOAT, floats.type());
        assertEquals(3, floats.size());
        assertEquals(1, floats.tensorIndex(0));
        assertEquals(3, floats.tensorIndex(1));
        assertEquals(4, floats.tensorIndex(2));
        assertEquals(0, floats.elementOffset(0));
        assertEquals(6, floats.elementOffset(1));
        assertEquals(11, floats.elementOffset(2));
        assertEquals(11, floats.elementCount());

        TensorLayout.Group doubles = groups.get(1);
        assertSame(ElementType.DOUBLE, doubles.type());
        assertEquals(2, doubles.size());
        assertEquals(0, doubles.tensorIndex(0));
        assertEquals(2, doubles.tensorIndex(1));
        assertEquals(0, doubles.elementOffset(0));
        assertEquals(4, doubles.elementOffset(1));
        assertEquals(6, doubles.elementCount());

        assertSame(ElementType.DOUBLE, layout.type(0));
        assertSame(ElementType.FLOAT, layout.type(1));
        assertArrayEquals(new long[] {1, 2}, layout.shape(2));
        assertEquals("[DOUBLE[4], FLOAT[2, 3], DOUBLE[1, 2], FLOAT[5], FLOAT[0]]", layout.describe());
    }

    @Test
    void singleTypeCallHasOneGroup() {
        TensorLayout layout = layout(d(3), d(2, 2));
        assertEquals(1, layout.groups().size());
        assertSame(ElementType.DOUBLE, layout.groups().get(0).type());
        assertEquals(7, layout.groups().get(0).elementCount());
        assertEquals(3, layout.groups().get(0).elementOffset(1));
    }

    @Test
    void scalarCountsAsOneElement() {
        TensorLayout layout = layout(Nd4j.scalar(2.5f), f(3));
        assertArrayEquals(new long[0], layout.shape(0));
        assertEquals(1, layout.groups().get(0).elementOffset(1));
        assertEquals(4, layout.groups().get(0).elementCount());
        assertEquals("[FLOAT[], FLOAT[3]]", layout.describe());
    }

    @Test
    void noTensorsMeansNoGroups() {
        TensorLayout layout = layout();
        assertEquals(0, layout.tensorCount());
        assertEquals(List.of(), layout.groups());
        assertEquals("[]", layout.describe());
        assertEquals(fnv1a(0), layout.fingerprint());
    }

    @Test
    void shapeIsACopy() {
        INDArray tensor = f(2, 3);
        TensorLayout layout = layout(tensor);
        layout.shape(0)[0] = 99;
        assertArrayEquals(new long[] {2, 3}, layout.shape(0));
        assertArrayEquals(new long[] {2, 3}, tensor.shape());
        assertThrows(UnsupportedOperationException.class, () -> layout.groups().clear());
    }

    @Test
    void fingerprintHasTheDocumentedStableValue() {
        // count, then per tensor: type code, rank, dimensions
        assertEquals(fnv1a(2, 1, 2, 2, 3, 2, 0), layout(f(2, 3), Nd4j.scalar(1.0)).fingerprint());
    }

    @Test
    void fingerprintIsEqualForEqualLayouts() {
        long first = layout(f(2, 3), d(4)).fingerprint();
        long second = TensorLayout.of("broadcastParams", 7, new INDArray[] {
            Nd4j.ones(DataType.FLOAT, 2, 3), Nd4j.rand(DataType.DOUBLE, 4)}).fingerprint();
        assertEquals(first, second);
        // Order and views do not matter, only shape and type.
        INDArray fOrder = Nd4j.create(DataType.FLOAT, new long[] {2, 3}, 'f');
        INDArray view = Nd4j.create(DataType.FLOAT, 4, 6).get(
                org.nd4j.linalg.indexing.NDArrayIndex.interval(1, 3),
                org.nd4j.linalg.indexing.NDArrayIndex.interval(0, 3));
        assertEquals(first, layout(fOrder, d(4)).fingerprint());
        assertEquals(first, layout(view, d(4)).fingerprint());
    }

    @Test
    void fingerprintDiffersForDifferentLayouts() {
        long base = layout(f(2, 3)).fingerprint();
        assertNotEquals(base, layout(f(3, 2)).fingerprint(), "[2,3] vs [3,2]");
        assertNotEquals(base, layout(f(6)).fingerprint(), "[2,3] vs [6]");
        assertNotEquals(base, layout(f(2, 3, 1)).fingerprint(), "[2,3] vs [2,3,1]");
        assertNotEquals(base, layout(d(2, 3)).fingerprint(), "FLOAT vs DOUBLE");
        assertNotEquals(base, layout(f(2, 3), f(2, 3)).fingerprint(), "one tensor vs two");
        assertNotEquals(base, layout().fingerprint(), "one tensor vs none");
        assertNotEquals(layout(f(2), d(2)).fingerprint(), layout(d(2), f(2)).fingerprint(), "type order");
        assertNotEquals(layout(Nd4j.scalar(1f)).fingerprint(), layout(f(1)).fingerprint(), "scalar vs [1]");
    }

    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"INT", "LONG", "SHORT", "BYTE", "BOOL", "UTF8"})
    void unsupportedTypesAreRejectedNamingOperationRankAndIndex(DataType dataType) {
        INDArray[] tensors = {f(2), Nd4j.create(dataType, 3), d(2)};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TensorLayout.of("reduceGradients", 3, tensors, TensorLayout.FLOATING_POINT));
        assertEquals("reduceGradients on rank 3: tensor 1 has data type " + dataType
                + "; supported: FLOAT, DOUBLE, HALF, BFLOAT16", e.getMessage());
    }

    @Test
    void nullTensorIsRejectedNamingOperationRankAndIndex() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TensorLayout.of("broadcastParams", 2, new INDArray[] {f(1), d(1), null}));
        assertEquals("broadcastParams on rank 2: tensor 2 is null", e.getMessage());
    }

    @Test
    void nullArrayIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TensorLayout.of("reduceGradients", 1, null));
        assertTrue(e.getMessage().startsWith("reduceGradients on rank 1: "), e.getMessage());
        assertTrue(e.getMessage().contains("null"), e.getMessage());
    }

    @Test
    void maxGroupBytesFitsAByteBuffer() {
        assertEquals(Integer.MAX_VALUE - 64, TensorLayout.MAX_GROUP_BYTES);
    }

    @Test
    void emptyGroupHasNoMembers() {
        TensorLayout.Group empty = TensorLayout.Group.empty(ElementType.DOUBLE);
        assertSame(ElementType.DOUBLE, empty.type());
        assertEquals(0, empty.size());
        assertEquals(0, empty.elementCount());
    }
}
