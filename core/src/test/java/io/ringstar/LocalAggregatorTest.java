package io.ringstar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

class LocalAggregatorTest {

    private static INDArray[] inputs() {
        return new INDArray[] {
            Nd4j.create(new float[] {1, 2, 3, 4, 5, 6}, new long[] {2, 3}, 'c'),
            Nd4j.create(new double[] {0.5, -1.25, 3e-9, 7}, new long[] {2, 2}, 'f'),
            Nd4j.scalar(2.5f),
            Nd4j.create(DataType.DOUBLE, 3, 0),
            Nd4j.create(new float[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, new long[] {3, 4}, 'c').getColumn(2),
        };
    }

    private static void assertCopies(INDArray[] inputs, INDArray[] results) {
        assertEquals(inputs.length, results.length);
        for (int i = 0; i < inputs.length; i++) {
            if (inputs[i].length() > 0) {
                // Empty tensors: see emptyResultsAreNewArrays.
                assertNotSame(inputs[i], results[i], "result " + i + " is a new array");
            }
            assertArrayEquals(inputs[i].shape(), results[i].shape(), "shape of result " + i);
            assertEquals(inputs[i].dataType(), results[i].dataType(), "type of result " + i);
            assertEquals(inputs[i], results[i], "values of result " + i);
        }
    }

    private static void checkCopies(Function<INDArray[], INDArray[]> call) {
        INDArray[] inputs = inputs();
        INDArray[] results = call.apply(inputs);
        assertCopies(inputs, results);
        assertEquals(4f, results[0].getFloat(1, 0));
        assertEquals(-1.25, results[1].getDouble(1, 0));
        assertEquals(0, results[2].rank());
        assertEquals(2.5f, results[2].getFloat(0));
        assertArrayEquals(new long[] {3, 0}, results[3].shape());
        assertEquals(10f, results[4].getFloat(2));

        // Results and inputs share no memory.
        results[0].addi(100);
        results[4].muli(-1);
        assertEquals(4f, inputs[0].getFloat(1, 0));
        assertEquals(10f, inputs[4].getFloat(2));
        inputs[1].assign(0);
        assertEquals(-1.25, results[1].getDouble(1, 0));
    }

    @Test
    void reduceGradientsReturnsCopies() {
        try (LocalAggregator aggregator = new LocalAggregator()) {
            checkCopies(aggregator::reduceGradients);
        }
    }

    @Test
    void broadcastParamsReturnsCopies() {
        try (LocalAggregator aggregator = new LocalAggregator(DistributedConfig.of(1, 0, "127.0.0.1:29500"))) {
            checkCopies(aggregator::broadcastParams);
        }
    }

    @Test
    void emptyResultsAreNewArrays() {
        try (LocalAggregator aggregator = new LocalAggregator()) {
            INDArray empty = Nd4j.create(DataType.DOUBLE, 3, 0);
            INDArray[] results = aggregator.reduceGradients(empty);
            assertNotSame(empty, results[0]);
            assertArrayEquals(new long[] {3, 0}, results[0].shape());
            assertEquals(DataType.DOUBLE, results[0].dataType());
            results = aggregator.broadcastParams(empty);
            assertNotSame(empty, results[0]);
        }
    }

    @Test
    void noTensorsGiveNoResults() {
        try (LocalAggregator aggregator = new LocalAggregator()) {
            assertEquals(0, aggregator.reduceGradients().length);
            assertEquals(0, aggregator.broadcastParams().length);
        }
    }

    @Test
    void intTensorsAreRejected() {
        try (LocalAggregator aggregator = new LocalAggregator()) {
            INDArray ints = Nd4j.create(DataType.INT, 2);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> aggregator.reduceGradients(Nd4j.create(DataType.FLOAT, 2), ints));
            assertEquals("reduceGradients on rank 0: tensor 1 has data type INT; supported: FLOAT, DOUBLE, HALF, "
                    + "BFLOAT16", e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> aggregator.broadcastParams(ints));
            assertEquals("broadcastParams on rank 0: tensor 0 has data type INT; supported: FLOAT, DOUBLE, HALF, "
                    + "BFLOAT16", e.getMessage());
        }
    }

    @Test
    void nullTensorsAreRejected() {
        try (LocalAggregator aggregator = new LocalAggregator()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> aggregator.reduceGradients(Nd4j.create(DataType.FLOAT, 2), null));
            assertEquals("reduceGradients on rank 0: tensor 1 is null", e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> aggregator.broadcastParams((INDArray[]) null));
        }
    }

    @Test
    void useAfterCloseIsRejected() {
        LocalAggregator aggregator = new LocalAggregator();
        aggregator.close();
        INDArray tensor = Nd4j.create(DataType.FLOAT, 2);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> aggregator.reduceGradients(tensor));
        assertEquals("reduceGradients: the aggregator is closed", e.getMessage());
        e = assertThrows(IllegalStateException.class, () -> aggregator.broadcastParams(tensor));
        assertEquals("broadcastParams: the aggregator is closed", e.getMessage());
        aggregator.close(); // closing twice is harmless
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 8})
    void configWithMoreThanOneRankIsRejected(int worldSize) {
        DistributedConfig config = DistributedConfig.of(worldSize, 0, "127.0.0.1:29500");
        InvalidConfigException e = assertThrows(InvalidConfigException.class, () -> new LocalAggregator(config));
        assertEquals("configure: worldSize = " + worldSize + ": LocalAggregator serves one rank only", e.getMessage());
    }
}
