package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.config.Compression;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.HalfFloats;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** {@code bench --algorithm comm}: its bus factors, sizes and closed forms (the flags and sweeps: the CLI's tests). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CommunicatorBenchTest {
    @Test
    void busFactorsAreNcclTests() {
        assertEquals(1.5, Operation.ALL_REDUCE.busBandwidthFactor(4));
        assertEquals(1.5, Operation.REDUCE.busBandwidthFactor(4));
        assertEquals(0.75, Operation.ALL_GATHER.busBandwidthFactor(4));
        assertEquals(2.0 / 3, Operation.REDUCE_SCATTER.busBandwidthFactor(3));
        assertEquals(1.0, Operation.COMM_BROADCAST.busBandwidthFactor(4));
        assertEquals(1.0, Operation.COMM_REDUCE.busBandwidthFactor(4));
        assertEquals(0.0, Operation.ALL_GATHER.busBandwidthFactor(1), "one rank moves nothing");
    }

    @Test
    void sizesCountTheFullBufferRoundedToWholeElementsPerRank() {
        // 1 KiB of floats at 3 ranks: 256 elements, 85 per rank.
        assertEquals(85, Operation.ALL_GATHER.inputElements(256, 3));
        assertEquals(255, Operation.ALL_GATHER.rowElements(85, 3), "the gathered result");
        assertEquals(255, Operation.REDUCE_SCATTER.inputElements(256, 3));
        assertEquals(255, Operation.REDUCE_SCATTER.rowElements(255, 3), "the input");
        assertEquals(256, Operation.ALL_REDUCE.inputElements(256, 3));
        assertEquals(0, Operation.ALL_GATHER.inputElements(2, 3), "less than one element per rank");
    }

    /** The closed forms against the result computed the long way from every rank's input. */
    @Test
    void closedFormsMatchTheResultComputedFromTheInputs() {
        int n = 3;
        int m = 1030; // past the pattern's period, so the wrap is covered
        for (int rank = 0; rank < n; rank++) {
            for (int i = 0; i < n * m; i++) {
                double sum = 0;
                for (int r = 0; r < n; r++) {
                    sum += ClosedFormPattern.value(r, i);
                }
                assertEquals(sum / n, ClosedFormPattern.expected(Operation.ALL_REDUCE, n, rank, n * m, i));
                assertEquals(rank == 0 ? sum / n : ClosedFormPattern.value(rank, i),
                        ClosedFormPattern.expected(Operation.COMM_REDUCE, n, rank, n * m, i));
                assertEquals(ClosedFormPattern.value(0, i),
                        ClosedFormPattern.expected(Operation.COMM_BROADCAST, n, rank, n * m, i));
                // All-gather: element i of the [n, m] result is rank i / m's element i mod m.
                assertEquals(ClosedFormPattern.value(i / m, i % m),
                        ClosedFormPattern.expected(Operation.ALL_GATHER, n, rank, m, i));
            }
            for (int i = 0; i < m; i++) {
                double sum = 0;
                for (int r = 0; r < n; r++) {
                    sum += ClosedFormPattern.value(r, rank * m + i);
                }
                assertEquals(sum / n, ClosedFormPattern.expected(Operation.REDUCE_SCATTER, n, rank, n * m, i));
            }
        }
    }

    @Test
    void halfPrecisionAveragesAreRightWithinTheBoundAndTopKIsNotChecked() {
        // Four ranks: averages from 1.5 to 2.5, so those above 2 lose their last bit in binary16.
        int n = 4;
        int count = 2000;
        INDArray average = Nd4j.create(DataType.FLOAT, count);
        try {
            for (int i = 0; i < count; i++) {
                double exact = ClosedFormPattern.expected(Operation.ALL_REDUCE, n, i);
                average.putScalar(i, HalfFloats.halfToFloat(HalfFloats.floatToHalf((float) exact)));
            }
            Compression fp16 = Compression.parse("fp16");
            assertEquals(0, ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    fp16), "the exact average rounded once to binary16 is within the bound");
            assertTrue(ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    Compression.NONE) > 0, "but it is not the exact average");
            average.putScalar(1500, average.getFloat(1500) * 1.05f);
            assertEquals(1, ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    fp16), "5 % off is past the bound");
            assertEquals(-1, ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.ALL_REDUCE, n, 0, count,
                    Compression.parse("topk:0.1")));
            assertTrue(ClosedFormPattern.countWrong(average, ElementType.FLOAT, Operation.BROADCAST, n, 0, count,
                    Compression.parse("topk:0.1")) > 0, "a broadcast is never compressed, so it is checked");
        } finally {
            average.close();
        }
    }

    @Test
    void theControlRingIsNeverCompressed() {
        // Its averages carry every rank's call times and wrong counts (one non-zero term each): in
        // fp16 the times overflowed to infinity, and top-k would drop most of them.
        Map<String, String> control = TransportSweep.controlOptions(Map.of("compression", "topk:0.1",
                "checksum", "crc32c"));
        assertEquals("none", control.get("compression"));
        assertEquals("crc32c", control.get("checksum"), "the other options stay");
        assertEquals("none", TransportSweep.controlOptions(Map.of()).get("compression"));
    }

    @Test
    void countWrongFindsAMisplacedElementAndAWrongLength() {
        int n = 2;
        int m = 5;
        INDArray gathered = ClosedFormPattern.create(ElementType.DOUBLE, 0, n * m);
        try {
            for (int i = 0; i < n * m; i++) {
                gathered.putScalar(i, ClosedFormPattern.value(i / m, i % m));
            }
            assertEquals(0, ClosedFormPattern.countWrong(gathered, ElementType.DOUBLE, Operation.ALL_GATHER, n, 1, m,
                    Compression.NONE));
            gathered.putScalar(7, ClosedFormPattern.value(0, 2));
            assertEquals(1, ClosedFormPattern.countWrong(gathered, ElementType.DOUBLE, Operation.ALL_GATHER, n, 1, m,
                    Compression.NONE));
            assertEquals(10, ClosedFormPattern.countWrong(gathered, ElementType.DOUBLE, Operation.REDUCE_SCATTER, n,
                    1, n * m, Compression.NONE), "a reduce-scatter of 10 elements gives 5 per rank, not 10");
        } finally {
            gathered.close();
        }
    }
}
