package io.ringstar.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.HalfFloats;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Param;

/** The reduction benchmark's operations compute what they claim and count their bytes; no timing. */
class ReductionBenchmarkTest {

    private static ReductionBenchmark open(String memory) {
        ReductionBenchmark benchmark = new ReductionBenchmark();
        benchmark.bytes = 4096;
        benchmark.memory = memory;
        benchmark.divisor = 3;
        benchmark.allocate();
        return benchmark;
    }

    /** Element {@code i} of {@code buffer} as a double. */
    private static double get(ElementType type, ByteBuffer buffer, int i) {
        int at = i * type.bytes();
        return switch (type) {
            case FLOAT -> buffer.getFloat(at);
            case DOUBLE -> buffer.getDouble(at);
            case HALF -> HalfFloats.halfToFloat(buffer.getShort(at));
            case BFLOAT16 -> HalfFloats.bfloat16ToFloat(buffer.getShort(at));
            case INT -> buffer.getInt(at);
            case LONG -> buffer.getLong(at);
        };
    }

    @Test
    void everyOpAndTypeOfTheParametersCombinesTheSourceIntoTheDestination() throws NoSuchFieldException {
        String[] ops = ReductionBenchmark.Combine.class.getField("op").getAnnotation(Param.class).value();
        String[] types = ReductionBenchmark.Combine.class.getField("type").getAnnotation(Param.class).value();
        for (String op : ops) {
            for (String type : types) {
                ReductionBenchmark benchmark = open("heapSource");
                ReductionBenchmark.Combine combine = new ReductionBenchmark.Combine();
                combine.op = op;
                combine.type = type;
                combine.fill(benchmark);
                ReductionBenchmark.Bytes counter = new ReductionBenchmark.Bytes();
                benchmark.combine(combine, counter);
                benchmark.combine(combine, counter);
                ElementType elementType = ElementType.valueOf(type);
                double source = get(elementType, benchmark.src, 0);
                double expected = switch (ReduceOp.valueOf(op)) {
                    case SUM, AVG -> 2 * source;
                    case MAX -> source;
                    case MIN, PROD -> 0;
                };
                for (int i : new int[] {0, 4096 / elementType.bytes() - 1}) {
                    assertEquals(expected, get(elementType, benchmark.dst, i), 1e-6, op + " of " + type + " at " + i);
                }
                assertEquals(2 * 4096, counter.bytes, op + " of " + type);
            }
        }
    }

    @Test
    void copyAndAddMoveTheWholeBuffer() {
        ReductionBenchmark benchmark = open("direct");
        ReductionBenchmark.Bytes counter = new ReductionBenchmark.Bytes();
        benchmark.addFloat(counter);
        assertEquals(1e-3f, benchmark.dst.getFloat(4092));
        benchmark.src.putFloat(4092, 5f);
        benchmark.copy(counter);
        assertEquals(5f, benchmark.dst.getFloat(4092));
        assertEquals(2 * 4096, counter.bytes);
    }

    @Test
    void anUnknownMemoryIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> open("offHeap"));
    }
}
