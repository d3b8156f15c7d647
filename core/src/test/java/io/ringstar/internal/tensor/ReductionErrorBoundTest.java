package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.ReductionCases.getBits;
import static io.ringstar.internal.tensor.ReductionCases.putBits;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ReductionCases.Memory;
import io.ringstar.internal.tensor.ReductionCases.Path;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The error bound stated in {@link Reduction}: n contributions summed by n - 1 {@code combine}
 * calls, each rounding once as the ring does hop by hop, stay within {@code n * u * sum |x_i|} of
 * the exact sum; an average (the last call divides by n) within that bound divided by n.
 */
class ReductionErrorBoundTest {
    private static final int TRIALS = 5_000;

    @ParameterizedTest
    @EnumSource(value = ElementType.class, names = {"HALF", "BFLOAT16"})
    void sumsAndAveragesOfUpToEightValuesStayWithinTheBound(ElementType type) {
        double u = type == ElementType.HALF ? 0x1p-11 : 0x1p-8;
        // Half the smallest subnormal: the absolute error of an average rounded into the subnormals.
        double subnormalSlack = type == ElementType.HALF ? 0x1p-25 : 0x1p-134;
        SplittableRandom random = new SplittableRandom(8);
        // The bound is one of the rounding, which every path shares bit for bit (ReductionTest): two paths do.
        for (Path path : List.of(Path.ACCELERATED, Path.SCALAR)) {
            for (int n = 2; n <= 8; n++) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG}) {
                    double[][] values = new double[n][TRIALS];
                    ByteBuffer[] contributions = new ByteBuffer[n];
                    for (int rank = 0; rank < n; rank++) {
                        contributions[rank] = Memory.DIRECT.allocate(2 * TRIALS);
                        for (int t = 0; t < TRIALS; t++) {
                            short bits = value(type, random, t);
                            putBits(contributions[rank], 2 * t, 2, bits);
                            values[rank][t] = widen(type, bits);
                        }
                    }
                    ByteBuffer partial = Memory.HEAP.allocate(2 * TRIALS);
                    partial.put(0, contributions[0], 0, 2 * TRIALS);
                    for (int rank = 1; rank < n; rank++) {
                        int divisor = op == ReduceOp.AVG && rank == n - 1 ? n : 1;
                        path.combine(op, type, partial, 0, partial, 0, contributions[rank].asReadOnlyBuffer(), 0,
                                TRIALS, divisor);
                    }
                    for (int t = 0; t < TRIALS; t++) {
                        double exact = 0;
                        double magnitudes = 0;
                        for (int rank = 0; rank < n; rank++) {
                            exact += values[rank][t]; // exact: a few 16-bit values fit in a double's 53 bits
                            magnitudes += Math.abs(values[rank][t]);
                        }
                        double result = widen(type, (short) getBits(partial, 2 * t, 2));
                        double bound = n * u * magnitudes;
                        if (op == ReduceOp.AVG) {
                            exact /= n;
                            bound = bound / n + subnormalSlack;
                        }
                        double error = Math.abs(result - exact);
                        assertTrue(error <= bound, path + " " + op + " of " + n + " " + type + " values, trial "
                                + t + ": " + result + " is " + error + " from " + exact + ", bound " + bound);
                    }
                }
            }
        }
    }

    /**
     * A random value of the type, either sign, of magnitudes from the subnormals to 2^12 (eight
     * of which sum below HALF's largest finite value); one in eight trials all near 1, where
     * cancellation makes the relative error largest.
     */
    private static short value(ElementType type, SplittableRandom random, int trial) {
        double magnitude = trial % 8 == 0 ? 1 + random.nextDouble() : Math.scalb(1 + random.nextDouble(),
                random.nextInt(-26, 12));
        float value = (float) (random.nextBoolean() ? magnitude : -magnitude);
        return type == ElementType.HALF ? HalfFloats.floatToHalf(value) : HalfFloats.floatToBfloat16(value);
    }

    private static double widen(ElementType type, short bits) {
        return type == ElementType.HALF ? HalfFloats.halfToFloat(bits) : HalfFloats.bfloat16ToFloat(bits);
    }
}
