package io.ringstar.internal.tensor;

import static io.ringstar.internal.tensor.Reduction.ADD;
import static io.ringstar.internal.tensor.Reduction.ADD_AND_DIVIDE;
import static io.ringstar.internal.tensor.Reduction.DIVIDE;
import static io.ringstar.internal.tensor.Reduction.MAXIMUM;
import static io.ringstar.internal.tensor.Reduction.MINIMUM;
import static io.ringstar.internal.tensor.Reduction.MULTIPLY;

/**
 * The float32 and float64 kernels of {@link BlockReduction} over whole arrays from element 0,
 * {@code a[i] = a[i] (kernel) b[i]}, in loops C2 vectorizes; each rounds as the scalar expression
 * of {@link ScalarReduction} does, so the two give the same bits. {@link HalfKernels} computes
 * HALF and BFLOAT16 here too, once widened.
 */
final class FloatKernels {
    private FloatKernels() {
    }

    static void floats(int kernel, float[] a, float[] b, int count, int divisor) {
        switch (kernel) {
            case ADD:
                for (int i = 0; i < count; i++) {
                    a[i] += b[i];
                }
                break;
            case ADD_AND_DIVIDE:
            case DIVIDE:
                floatQuotients(kernel == ADD_AND_DIVIDE, a, b, count, divisor);
                break;
            case MULTIPLY:
                for (int i = 0; i < count; i++) {
                    a[i] *= b[i];
                }
                break;
            case MINIMUM:
                for (int i = 0; i < count; i++) {
                    a[i] = Math.min(a[i], b[i]);
                }
                break;
            case MAXIMUM:
                for (int i = 0; i < count; i++) {
                    a[i] = Math.max(a[i], b[i]);
                }
                break;
            default:
                throw new IllegalArgumentException("unknown kernel " + kernel);
        }
    }

    private static void floatQuotients(boolean add, float[] a, float[] b, int count, int divisor) {
        float by = divisor;
        if (isPowerOfTwo(divisor)) {
            // x / 2^k and x * 2^-k are the same real number, so they round to the same float; a
            // multiplication costs a fraction of a division.
            float scale = 1f / by;
            if (add) {
                for (int i = 0; i < count; i++) {
                    a[i] = (a[i] + b[i]) * scale;
                }
            } else {
                for (int i = 0; i < count; i++) {
                    a[i] *= scale;
                }
            }
        } else if (add) {
            for (int i = 0; i < count; i++) {
                a[i] = (a[i] + b[i]) / by;
            }
        } else {
            for (int i = 0; i < count; i++) {
                a[i] /= by;
            }
        }
    }

    static void doubles(int kernel, double[] a, double[] b, int count, int divisor) {
        switch (kernel) {
            case ADD:
                for (int i = 0; i < count; i++) {
                    a[i] += b[i];
                }
                break;
            case ADD_AND_DIVIDE:
            case DIVIDE:
                doubleQuotients(kernel == ADD_AND_DIVIDE, a, b, count, divisor);
                break;
            case MULTIPLY:
                for (int i = 0; i < count; i++) {
                    a[i] *= b[i];
                }
                break;
            case MINIMUM:
                for (int i = 0; i < count; i++) {
                    a[i] = Math.min(a[i], b[i]);
                }
                break;
            case MAXIMUM:
                for (int i = 0; i < count; i++) {
                    a[i] = Math.max(a[i], b[i]);
                }
                break;
            default:
                throw new IllegalArgumentException("unknown kernel " + kernel);
        }
    }

    private static void doubleQuotients(boolean add, double[] a, double[] b, int count, int divisor) {
        double by = divisor;
        if (isPowerOfTwo(divisor)) {
            double scale = 1d / by;
            if (add) {
                for (int i = 0; i < count; i++) {
                    a[i] = (a[i] + b[i]) * scale;
                }
            } else {
                for (int i = 0; i < count; i++) {
                    a[i] *= scale;
                }
            }
        } else if (add) {
            for (int i = 0; i < count; i++) {
                a[i] = (a[i] + b[i]) / by;
            }
        } else {
            for (int i = 0; i < count; i++) {
                a[i] /= by;
            }
        }
    }

    /** Powers of two up to 2^30, whose reciprocals are exact normal floats and doubles. */
    private static boolean isPowerOfTwo(int divisor) {
        return divisor > 0 && (divisor & (divisor - 1)) == 0;
    }
}
