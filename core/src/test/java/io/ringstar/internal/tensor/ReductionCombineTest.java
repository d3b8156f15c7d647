package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.ReductionCases.assertElements;
import static io.ringstar.internal.tensor.ReductionCases.assertGuards;
import static io.ringstar.internal.tensor.ReductionCases.bits;
import static io.ringstar.internal.tensor.ReductionCases.fill;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ReductionCases.Kernel;
import io.ringstar.internal.tensor.ReductionCases.Memory;
import io.ringstar.internal.tensor.ReductionCases.Path;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link Reduction#combine} out of place, and which ops and types take a divisor, on both paths. */
class ReductionCombineTest {
    private static final int DST_OFFSET = 13;
    private static final int SRC_OFFSET = 6;
    private static final int TAIL = 16;

    @ParameterizedTest
    @EnumSource(ElementType.class)
    void combineWritesOutOfPlaceAndLeavesBothOperands(ElementType type) {
        int size = type.bytes();
        for (int count : new int[] {7, 2049, 10007}) {
            int bytes = count * size;
            for (Path path : Path.of(type)) {
                for (Kernel kernel : Kernel.of(type)) {
                    if (!kernel.method().equals("combine")) {
                        continue;
                    }
                    String context = path + " " + kernel + " " + type + " of " + count;
                    ByteBuffer dst = Memory.DIRECT_SLICE.allocate(DST_OFFSET + bytes + TAIL);
                    ByteBuffer a = Memory.HEAP_SLICE.allocate(SRC_OFFSET + bytes + TAIL);
                    ByteBuffer b = Memory.DIRECT.allocate(DST_OFFSET + bytes + TAIL);
                    fill(type, a, SRC_OFFSET, count, true);
                    fill(type, b, DST_OFFSET, count, false);
                    path.combine(kernel.op(), type, dst, DST_OFFSET, a.asReadOnlyBuffer(), SRC_OFFSET,
                            b.asReadOnlyBuffer(), DST_OFFSET, count, kernel.divisor());
                    assertElements(type, dst, DST_OFFSET, count, context, i -> kernel.expectedAt(type, i));
                    assertElements(type, a, SRC_OFFSET, count, context + " (a)", i -> bits(type, i, true));
                    assertElements(type, b, DST_OFFSET, count, context + " (b)", i -> bits(type, i, false));
                    assertGuards(dst, DST_OFFSET, DST_OFFSET + bytes, context);
                    assertGuards(a, SRC_OFFSET, SRC_OFFSET + bytes, context + " (a)");
                }
            }
        }
    }

    @Test
    void onlySumsAndAveragesOfFloatingPointTypesTakeADivisor() {
        for (Path path : Path.values()) {
            for (ElementType type : ElementType.values()) {
                for (ReduceOp op : ReduceOp.values()) {
                    boolean divisible = type.isFloatingPoint() && (op == ReduceOp.SUM || op == ReduceOp.AVG);
                    for (int divisor : new int[] {2, 3, 0, -1}) {
                        ByteBuffer dst = Memory.HEAP.allocate(64);
                        ByteBuffer src = Memory.DIRECT.allocate(64);
                        String context = path + " " + op + " of " + type + " by " + divisor;
                        if (divisible && divisor > 0) {
                            path.combine(op, type, dst, 0, dst, 0, src, 0, 4, divisor);
                            continue;
                        }
                        assertThrows(IllegalArgumentException.class,
                                () -> path.combine(op, type, dst, 0, dst, 0, src, 0, 4, divisor), context);
                        assertGuards(dst, 0, 0, context + ": a refused call wrote");
                    }
                    path.combine(op, type, Memory.HEAP.allocate(64), 0, src(64), 0, src(64), 0, 4, 1);
                }
                if (!type.isFloatingPoint()) {
                    ByteBuffer dst = Memory.HEAP.allocate(64);
                    String context = path + " " + type;
                    assertThrows(IllegalArgumentException.class,
                            () -> path.addAndDivide(type, dst, 0, src(64), 0, 2, 3), context);
                    assertThrows(IllegalArgumentException.class, () -> path.divide(type, dst, 0, 2, 2), context);
                    path.divide(type, dst, 0, 2, 1);
                    path.addAndDivide(type, dst, 0, dst, 0, 0, 1);
                    assertGuards(dst, 0, 0, context + ": a refused call wrote");
                }
            }
        }
    }

    private static ByteBuffer src(int bytes) {
        return Memory.HEAP.allocate(bytes).asReadOnlyBuffer();
    }
}
