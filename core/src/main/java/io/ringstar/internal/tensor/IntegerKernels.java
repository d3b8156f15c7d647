package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.Reduction.ADD;
import static io.ringstar.internal.tensor.Reduction.MAXIMUM;
import static io.ringstar.internal.tensor.Reduction.MINIMUM;
import static io.ringstar.internal.tensor.Reduction.MULTIPLY;

/**
 * The INT and LONG kernels of {@link BlockReduction} over whole arrays from element 0,
 * {@code a[i] = a[i] (kernel) b[i]}: sums and products wrap around as Java's arithmetic does.
 * Minimum and maximum are written with masks rather than {@code Math.min}: C2 on JDK 17 leaves
 * a loop of the integer {@code Math.min} scalar (a conditional move per element), about four
 * times slower than this one, which it vectorizes.
 */
final class IntegerKernels {
    private IntegerKernels() {
    }

    static void ints(int kernel, int[] a, int[] b, int count) {
        switch (kernel) {
            case ADD:
                for (int i = 0; i < count; i++) {
                    a[i] += b[i];
                }
                break;
            case MULTIPLY:
                for (int i = 0; i < count; i++) {
                    a[i] *= b[i];
                }
                break;
            case MINIMUM:
                for (int i = 0; i < count; i++) {
                    int x = a[i];
                    int y = b[i];
                    a[i] = y ^ ((x ^ y) & lessThan(x, y));
                }
                break;
            case MAXIMUM:
                for (int i = 0; i < count; i++) {
                    int x = a[i];
                    int y = b[i];
                    a[i] = x ^ ((x ^ y) & lessThan(x, y));
                }
                break;
            default:
                throw new IllegalArgumentException("integers have no kernel " + kernel);
        }
    }

    static void longs(int kernel, long[] a, long[] b, int count) {
        switch (kernel) {
            case ADD:
                for (int i = 0; i < count; i++) {
                    a[i] += b[i];
                }
                break;
            case MULTIPLY:
                for (int i = 0; i < count; i++) {
                    a[i] *= b[i];
                }
                break;
            case MINIMUM:
                for (int i = 0; i < count; i++) {
                    long x = a[i];
                    long y = b[i];
                    a[i] = y ^ ((x ^ y) & lessThan(x, y));
                }
                break;
            case MAXIMUM:
                for (int i = 0; i < count; i++) {
                    long x = a[i];
                    long y = b[i];
                    a[i] = x ^ ((x ^ y) & lessThan(x, y));
                }
                break;
            default:
                throw new IllegalArgumentException("integers have no kernel " + kernel);
        }
    }

    /**
     * All ones if {@code x < y}, else zero: the sign of {@code x - y}, corrected where that
     * difference overflows, which is where {@code x} and {@code y} differ in sign (Hacker's
     * Delight, 2-12).
     */
    static int lessThan(int x, int y) {
        int difference = x - y;
        return (difference ^ ((x ^ y) & (difference ^ x))) >> 31;
    }

    static long lessThan(long x, long y) {
        long difference = x - y;
        return (difference ^ ((x ^ y) & (difference ^ x))) >> 63;
    }
}
