package io.ringstar.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

class TensorBucketTest {

    /** A 'c'-order FLOAT matrix holding 0, 1, 2, … in row-major order. */
    private static INDArray floatMatrix(int rows, int columns) {
        float[] data = new float[rows * columns];
        for (int i = 0; i < data.length; i++) {
            data[i] = i;
        }
        return Nd4j.create(data, new long[] {rows, columns}, 'c');
    }

    /** A DOUBLE array of {@code shape} and {@code order} whose element at 'c'-order position k is 0.1·k + 0.5. */
    private static INDArray doubleArray(char order, long... shape) {
        INDArray array = Nd4j.create(DataType.DOUBLE, shape, order);
        long[] index = new long[shape.length];
        for (long k = 0; k < array.length(); k++) {
            cIndex(k, shape, index);
            array.putScalar(index, 0.1 * k + 0.5);
        }
        return array;
    }

    private static void cIndex(long linear, long[] shape, long[] index) {
        for (int d = shape.length - 1; d >= 0; d--) {
            index[d] = linear % shape[d];
            linear /= shape[d];
        }
    }

    /** The elements in 'c' order, read one index at a time so that strides and offsets of views count. */
    private static double[] cOrderValues(INDArray array) {
        if (array.rank() == 0) {
            return new double[] {array.getDouble(0)};
        }
        long[] shape = array.shape();
        double[] values = new double[Math.toIntExact(array.length())];
        long[] index = new long[shape.length];
        for (int k = 0; k < values.length; k++) {
            cIndex(k, shape, index);
            values[k] = array.getDouble(index);
        }
        return values;
    }

    /**
     * Packs {@code tensors} group by group, unpacks every one and checks it equals its input exactly;
     * checks that inputs are unchanged and results are new arrays. Returns the results by tensor index.
     */
    private static INDArray[] roundTrip(INDArray... tensors) {
        List<double[]> before = new ArrayList<>();
        for (INDArray tensor : tensors) {
            before.add(cOrderValues(tensor));
        }
        TensorLayout layout = TensorLayout.of("test", 0, tensors);
        INDArray[] results = new INDArray[tensors.length];
        for (TensorLayout.Group group : layout.groups()) {
            try (TensorBucket bucket = new TensorBucket(group.type())) {
                ByteBuffer bytes = pack(bucket, tensors, group);
                assertEquals(0, bytes.position());
                assertEquals(group.elementCount() * group.type().bytes(), bytes.limit());
                assertEquals(ByteOrder.LITTLE_ENDIAN, bytes.order());
                for (int member = 0; member < group.size(); member++) {
                    int t = group.tensorIndex(member);
                    INDArray result = unpack(bucket, group.elementOffset(member), layout.shape(t));
                    assertNotSame(tensors[t], result);
                    assertArrayEquals(tensors[t].shape(), result.shape(), "shape of tensor " + t);
                    assertEquals(tensors[t].dataType(), result.dataType(), "type of tensor " + t);
                    assertArrayEquals(before.get(t), cOrderValues(result), "values of tensor " + t);
                    if (result.rank() > 0 && result.length() > 0) {
                        assertEquals('c', result.ordering());
                    }
                    results[t] = result;
                }
                // Results are new arrays: writing to them changes neither the bucket nor the input.
                byte[] packed = new byte[bytes.remaining()];
                bytes.duplicate().get(packed);
                for (int member = 0; member < group.size(); member++) {
                    INDArray result = results[group.tensorIndex(member)];
                    if (result.length() > 0) {
                        result.addi(1000);
                    }
                }
                byte[] packedAfter = new byte[bytes.remaining()];
                bytes.duplicate().get(packedAfter);
                assertArrayEquals(packed, packedAfter, "bucket bytes after writing to the results");
                for (int member = 0; member < group.size(); member++) {
                    int t = group.tensorIndex(member);
                    INDArray again = unpack(bucket, group.elementOffset(member), layout.shape(t));
                    assertArrayEquals(before.get(t), cOrderValues(again), "values of tensor " + t + " unpacked again");
                    results[t] = again;
                }
            }
        }
        for (int t = 0; t < tensors.length; t++) {
            assertArrayEquals(before.get(t), cOrderValues(tensors[t]), "input " + t + " is unchanged");
        }
        return results;
    }

    /** The whole group into the bucket, as one window. */
    private static ByteBuffer pack(TensorBucket bucket, INDArray[] tensors, TensorLayout.Group group) {
        return bucket.packWindow(tensors, group, 0, group.elementCount());
    }

    /**
     * The bucket's elements from {@code offset} as a new array of {@code shape}, the way the
     * aggregators take results out.
     */
    private static INDArray unpack(TensorBucket bucket, long offset, long[] shape) {
        INDArray result = TensorBucket.newResult(bucket.type(), shape);
        long end = offset + result.length();
        TensorLayout.Group single = new TensorLayout.Group(bucket.type(), new int[] {0}, new long[] {offset}, end);
        bucket.unpackWindow(new INDArray[] {result}, single, 0, end);
        return result;
    }

    private static float[] floats(ByteBuffer bytes) {
        float[] values = new float[bytes.remaining() / Float.BYTES];
        for (int i = 0; i < values.length; i++) {
            values[i] = bytes.getFloat(bytes.position() + i * Float.BYTES);
        }
        return values;
    }

    @Test
    void packedBytesOfAnFOrderMatrixAreItsElementsInCOrder() {
        INDArray matrix = Nd4j.create(new float[] {1, 4, 2, 5, 3, 6}, new long[] {2, 3}, 'f');
        assertEquals(2f, matrix.getFloat(0, 1));
        TensorLayout layout = TensorLayout.of("test", 0, new INDArray[] {matrix});
        try (TensorBucket bucket = new TensorBucket(ElementType.FLOAT)) {
            ByteBuffer bytes = pack(bucket, new INDArray[] {matrix}, layout.groups().get(0));
            assertEquals(24, bytes.limit());
            for (int i = 0; i < 6; i++) {
                assertEquals(i + 1f, bytes.getFloat(i * Float.BYTES), "float at byte " + i * Float.BYTES);
            }
            // 5.0f = 0x40A00000: least significant byte first
            assertEquals(0x00, bytes.get(16));
            assertEquals(0x00, bytes.get(17));
            assertEquals((byte) 0xA0, bytes.get(18));
            assertEquals(0x40, bytes.get(19));
        }
    }

    @Test
    void cOrderFloatRoundTrips() {
        roundTrip(floatMatrix(2, 3));
    }

    @Test
    void fOrderDoubleRoundTrips() {
        INDArray f = doubleArray('f', 3, 4);
        assertEquals('f', f.ordering());
        INDArray[] results = roundTrip(f);
        assertEquals(0.1 * 5 + 0.5, results[0].getDouble(1, 1));
    }

    @Test
    void threeDimensionalFOrderRoundTrips() {
        roundTrip(doubleArray('f', 2, 3, 4));
    }

    @Test
    void columnViewRoundTrips() {
        INDArray matrix = floatMatrix(3, 4);
        INDArray column = matrix.getColumn(1);
        assertArrayEquals(new double[] {1, 5, 9}, cOrderValues(column));
        roundTrip(column);
    }

    @Test
    void transposedMatrixRoundTrips() {
        INDArray transposed = floatMatrix(3, 4).transpose();
        assertArrayEquals(new long[] {4, 3}, transposed.shape());
        INDArray[] results = roundTrip(transposed);
        assertArrayEquals(new double[] {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, cOrderValues(results[0]));
    }

    @Test
    void intervalOfAVectorRoundTrips() {
        // A contiguous view at an offset; ND4J calls its order 'f', and it is copied as bytes.
        INDArray vector = Nd4j.arange(0, 10).castTo(DataType.FLOAT);
        INDArray view = vector.get(NDArrayIndex.interval(3, 7));
        assertTrue(TensorMemory.isLinearInCOrder(view));
        assertArrayEquals(new double[] {3, 4, 5, 6}, cOrderValues(view));
        roundTrip(view, vector, view);
    }

    @Test
    void onlyTensorsWhoseCOrderIsTheirMemoryOrderAreCopiedAsBytes() {
        assertTrue(TensorMemory.isLinearInCOrder(floatMatrix(3, 4)));
        assertTrue(TensorMemory.isLinearInCOrder(Nd4j.create(DataType.FLOAT, new long[] {1, 5}, 'f')));
        assertFalse(TensorMemory.isLinearInCOrder(Nd4j.create(DataType.FLOAT, new long[] {2, 5}, 'f')));
        assertFalse(TensorMemory.isLinearInCOrder(floatMatrix(3, 4).getColumn(1)));
        assertFalse(TensorMemory.isLinearInCOrder(floatMatrix(3, 4).transpose()));
        // ND4J calls this 'c' order and no view, yet its 'c'-order elements are not consecutive in memory.
        assertFalse(TensorMemory.isLinearInCOrder(Nd4j.create(DataType.FLOAT, 2, 3, 4).permute(0, 2, 1)));
        assertFalse(TensorMemory.isLinearInCOrder(Nd4j.scalar(1f)));
        assertFalse(TensorMemory.isLinearInCOrder(Nd4j.create(DataType.FLOAT, 0, 3)));
    }

    @Test
    void rowVectorInFOrderRoundTrips() {
        INDArray row = Nd4j.create(new float[] {1, 2, 3, 4, 5}, new long[] {1, 5}, 'f');
        roundTrip(row);
    }

    @Test
    void rowViewWithOffsetRoundTrips() {
        INDArray row = floatMatrix(3, 4).getRow(2);
        assertArrayEquals(new double[] {8, 9, 10, 11}, cOrderValues(row));
        roundTrip(row);
    }

    @Test
    void subMatrixViewRoundTrips() {
        INDArray view = doubleArray('c', 5, 6).get(NDArrayIndex.interval(1, 4), NDArrayIndex.interval(2, 5));
        INDArray[] results = roundTrip(view);
        // row 1, column 2 of the 6-wide source: position 8
        assertEquals(0.1 * 8 + 0.5, results[0].getDouble(0, 0));
    }

    @Test
    void scalarRoundTrips() {
        INDArray[] results = roundTrip(Nd4j.scalar(2.5f));
        assertEquals(0, results[0].rank());
        assertEquals(2.5f, results[0].getFloat(0));
    }

    @Test
    void doubleScalarRoundTrips() {
        INDArray[] results = roundTrip(Nd4j.scalar(0.1));
        assertEquals(DataType.DOUBLE, results[0].dataType());
        assertEquals(0.1, results[0].getDouble(0));
    }

    @Test
    void singleElementArraysRoundTrip() {
        INDArray one = Nd4j.create(new float[] {3.25f}, new long[] {1}, 'c');
        INDArray oneByOne = Nd4j.create(new float[] {-7f}, new long[] {1, 1}, 'c');
        roundTrip(one);
        roundTrip(oneByOne);
        roundTrip(one, oneByOne);
    }

    @Test
    void emptyArraysRoundTrip() {
        INDArray[] results = roundTrip(Nd4j.create(DataType.FLOAT, 0));
        assertArrayEquals(new long[] {0}, results[0].shape());
        results = roundTrip(Nd4j.create(DataType.FLOAT, 3, 0));
        assertArrayEquals(new long[] {3, 0}, results[0].shape());
        assertEquals(0, results[0].length());
    }

    @Test
    void emptyGroupPacksToNoBytes() {
        INDArray[] tensors = {Nd4j.create(DataType.DOUBLE, 3, 0)};
        TensorLayout layout = TensorLayout.of("test", 0, tensors);
        try (TensorBucket bucket = new TensorBucket(ElementType.DOUBLE)) {
            ByteBuffer bytes = pack(bucket, tensors, layout.groups().get(0));
            assertEquals(0, bytes.limit());
        }
    }

    @Test
    void severalTensorsOfOneGroupSitAtTheirOffsets() {
        INDArray matrix = floatMatrix(3, 4);
        INDArray[] tensors = {
            matrix.getColumn(1),           // 1, 5, 9
            Nd4j.scalar(2.5f),             // 2.5
            Nd4j.create(DataType.FLOAT, 0),
            matrix.getRow(2),              // 8, 9, 10, 11
            Nd4j.create(new float[] {-1, -2, -3, -4}, new long[] {2, 2}, 'f'), // c order: -1, -3, -2, -4
        };
        TensorLayout layout = TensorLayout.of("test", 0, tensors);
        TensorLayout.Group group = layout.groups().get(0);
        try (TensorBucket bucket = new TensorBucket(ElementType.FLOAT)) {
            ByteBuffer bytes = pack(bucket, tensors, group);
            assertArrayEquals(new float[] {1, 5, 9, 2.5f, 8, 9, 10, 11, -1, -3, -2, -4}, floats(bytes));
        }
        roundTrip(tensors);
    }

    @Test
    void floatAndDoubleGroupsRoundTripTogether() {
        INDArray[] results = roundTrip(doubleArray('f', 2, 2), floatMatrix(2, 3), Nd4j.scalar(7.0),
                floatMatrix(4, 3).transpose(), doubleArray('c', 5));
        assertEquals(DataType.DOUBLE, results[0].dataType());
        assertEquals(DataType.FLOAT, results[1].dataType());
        assertEquals(7.0, results[2].getDouble(0));
    }

    @Test
    void bucketIsReusedForALargerThenASmallerCall() {
        try (TensorBucket bucket = new TensorBucket(ElementType.FLOAT)) {
            assertEquals(0, bucket.capacityBytes());
            float[] big = new float[1000];
            for (int i = 0; i < big.length; i++) {
                big[i] = i * 0.5f;
            }
            INDArray[] large = {Nd4j.create(big, new long[] {10, 100}, 'c')};
            ByteBuffer bytes = pack(bucket, large, TensorLayout.of("test", 0, large).groups().get(0));
            assertEquals(4000, bytes.limit());
            assertEquals(4000, bucket.capacityBytes());
            assertEquals(999 * 0.5f, bytes.getFloat(999 * 4));

            INDArray[] small = {Nd4j.create(new float[] {7, 8, 9}, new long[] {3}, 'c')};
            TensorLayout smallLayout = TensorLayout.of("test", 0, small);
            bytes = pack(bucket, small, smallLayout.groups().get(0));
            assertEquals(12, bytes.limit());
            assertEquals(4000, bucket.capacityBytes(), "the bucket does not shrink");
            assertArrayEquals(new float[] {7, 8, 9}, floats(bytes));
            INDArray back = unpack(bucket, 0, new long[] {3});
            assertArrayEquals(new double[] {7, 8, 9}, cOrderValues(back));

            INDArray[] larger = {Nd4j.create(DataType.FLOAT, 2000).assign(3f)};
            bytes = pack(bucket, larger, TensorLayout.of("test", 0, larger).groups().get(0));
            assertEquals(8000, bytes.limit());
            assertEquals(8000, bucket.capacityBytes(), "the bucket grows");
            assertEquals(3f, bytes.getFloat(0));
            assertEquals(3f, bytes.getFloat(7996));

            bucket.close();
            assertEquals(0, bucket.capacityBytes());
            bytes = pack(bucket, small, smallLayout.groups().get(0));
            assertArrayEquals(new float[] {7, 8, 9}, floats(bytes), "usable again after close");
            assertEquals(12, bucket.capacityBytes());
        }
    }

    @Test
    void bucketOfAnotherTypeIsRejected() {
        INDArray[] tensors = {floatMatrix(1, 2)};
        TensorLayout.Group group = TensorLayout.of("test", 0, tensors).groups().get(0);
        try (TensorBucket bucket = new TensorBucket(ElementType.DOUBLE)) {
            assertSame(ElementType.DOUBLE, bucket.type());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> pack(bucket, tensors, group));
            assertEquals("a DOUBLE bucket cannot hold FLOAT tensors", e.getMessage());
        }
    }

    @Test
    void windowsOfAnySizeCarryEveryKindOfTensorIntact() {
        INDArray matrix = floatMatrix(5, 4);
        INDArray[] tensors = {floatMatrix(3, 4), matrix.getColumn(1), Nd4j.scalar(2.5f),
                Nd4j.create(new float[] {1, 4, 2, 5, 3, 6}, new long[] {2, 3}, 'f'), Nd4j.create(DataType.FLOAT, 0, 3),
                matrix.transpose(), Nd4j.arange(0, 10).castTo(DataType.FLOAT).get(NDArrayIndex.interval(3, 7))};
        List<double[]> expected = new ArrayList<>();
        for (INDArray tensor : tensors) {
            expected.add(cOrderValues(tensor));
        }
        TensorLayout layout = TensorLayout.of("test", 0, tensors);
        TensorLayout.Group group = layout.groups().get(0);
        for (int window = 1; window <= group.elementCount() + 1; window++) {
            try (TensorBucket bucket = new TensorBucket(ElementType.FLOAT)) {
                INDArray[] results = new INDArray[tensors.length];
                for (int t = 0; t < tensors.length; t++) {
                    results[t] = TensorBucket.newResult(bucket.type(), layout.shape(t));
                }
                for (long from = 0; from < group.elementCount(); from += window) {
                    long to = Math.min(group.elementCount(), from + window);
                    ByteBuffer bytes = bucket.packWindow(tensors, group, from, to);
                    assertEquals((to - from) * Float.BYTES, bytes.limit());
                    bucket.unpackWindow(results, group, from, to);
                }
                bucket.forgetFlattened();
                for (int t = 0; t < tensors.length; t++) {
                    assertArrayEquals(tensors[t].shape(), results[t].shape(), "window " + window + " tensor " + t);
                    assertArrayEquals(expected.get(t), cOrderValues(results[t]), "window " + window + " tensor " + t);
                    assertArrayEquals(expected.get(t), cOrderValues(tensors[t]), "input " + t + " was changed");
                }
            }
        }
    }

    /**
     * In place, as the communicator works: pack the tensors, change every element in the bucket
     * (here: negate it and add 1, in 'c' order), unpack into the same tensors, for every type and
     * every kind of layout (scalar, empty, 'f' order, strided view, transposed), in one window and
     * in windows of 5 elements that cut through the tensors.
     */
    @Test
    void unpacksInPlaceIntoEveryLayoutAndType() {
        for (ElementType type : ElementType.values()) {
            for (long window : new long[] {Long.MAX_VALUE, 5}) {
                INDArray base = Nd4j.create(DataType.DOUBLE, 4, 6).castTo(type.dataType());
                INDArray[] tensors = {Nd4j.scalar(type.dataType(), 7), Nd4j.create(type.dataType(), 0),
                        Nd4j.create(type.dataType(), new long[] {3, 4}, 'f'),
                        base.get(NDArrayIndex.all(), NDArrayIndex.interval(1, 4)), Nd4j.create(type.dataType(), 2, 5)
                        .transpose(), Nd4j.create(type.dataType(), 11)};
                long k = 0;
                List<double[]> before = new ArrayList<>();
                for (INDArray tensor : tensors) {
                    long[] shape = tensor.shape();
                    long[] index = new long[shape.length];
                    for (long e = 0; e < tensor.length(); e++) {
                        if (shape.length == 0) {
                            tensor.assign(k++ % 13);
                        } else {
                            cIndex(e, shape, index);
                            tensor.putScalar(index, k++ % 13);
                        }
                    }
                    before.add(cOrderValues(tensor));
                }
                TensorLayout layout = TensorLayout.of("test", 0, tensors);
                TensorLayout.Group group = layout.groups().get(0);
                try (TensorBucket bucket = new TensorBucket(type)) {
                    for (long from = 0; from < group.elementCount(); from += Math.min(window, group.elementCount())) {
                        long to = Math.min(group.elementCount(), from + Math.min(window, group.elementCount()));
                        ByteBuffer bytes = bucket.packWindow(tensors, group, from, to);
                        for (int e = 0; e < to - from; e++) {
                            negatePlusOne(type, bytes, e);
                        }
                        bucket.unpackWindow(tensors, group, from, to);
                        bucket.forgetFlattenedBefore(tensors, group, to);
                    }
                }
                for (int t = 0; t < tensors.length; t++) {
                    double[] after = cOrderValues(tensors[t]);
                    for (int e = 0; e < after.length; e++) {
                        assertEquals(1 - before.get(t)[e], after[e], 0.0, type + " window " + window + " tensor " + t
                                + " element " + e);
                    }
                }
                assertEquals(0.0, base.getDouble(0, 0), 0.0, "the view's base outside the view is untouched");
                assertEquals(0.0, base.getDouble(3, 5), 0.0, "the view's base outside the view is untouched");
            }
        }
    }

    private static void negatePlusOne(ElementType type, ByteBuffer bytes, int element) {
        int at = element * type.bytes();
        switch (type) {
            case FLOAT:
                bytes.putFloat(at, 1 - bytes.getFloat(at));
                break;
            case DOUBLE:
                bytes.putDouble(at, 1 - bytes.getDouble(at));
                break;
            case HALF:
                bytes.putShort(at, HalfFloats.floatToHalf(1 - HalfFloats.halfToFloat(bytes.getShort(at))));
                break;
            case BFLOAT16:
                bytes.putShort(at, HalfFloats.floatToBfloat16(1 - HalfFloats.bfloat16ToFloat(bytes.getShort(at))));
                break;
            case INT:
                bytes.putInt(at, 1 - bytes.getInt(at));
                break;
            default:
                bytes.putLong(at, 1 - bytes.getLong(at));
                break;
        }
    }
}
