package io.ringstar;

/**
 * How a reducing collective combines the ranks' values, element by element.
 *
 * <p>For floating-point types the operations follow IEEE 754 with Java's rules: {@link #MIN} and
 * {@link #MAX} are {@link Math#min(double, double)} and {@link Math#max(double, double)} (a NaN wins, and
 * {@code -0.0 < 0.0}). For INT and LONG, {@link #SUM} and {@link #PROD} wrap around in two's
 * complement as Java's {@code +} and {@code *} do, and {@link #AVG} is refused with an
 * {@link IllegalArgumentException} before anything is sent (an integer mean would have to round).
 * HALF and BFLOAT16 values are combined in float32 and rounded to their type once per value sent.
 */
public enum ReduceOp {
    /** The sum over all ranks. */
    SUM,
    /** The sum over all ranks divided by the world size, once, at the end (floating-point types only). */
    AVG,
    /** The smallest value over all ranks. */
    MIN,
    /** The largest value over all ranks. */
    MAX,
    /** The product over all ranks. */
    PROD
}
