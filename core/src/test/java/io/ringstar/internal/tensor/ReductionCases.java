package io.ringstar.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstar.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntToLongFunction;

/** What the Reduction tests share: buffers, the two paths, the kernels with their closed forms, and the data. */
final class ReductionCases {
    static final byte GUARD = (byte) 0x5A;

    private ReductionCases() {
    }

    /** How a test buffer is made; slices start 3 bytes into their memory, so their array offset or address is odd. */
    enum Memory {
        HEAP, DIRECT, HEAP_SLICE, DIRECT_SLICE;

        ByteBuffer allocate(int bytes) {
            ByteBuffer buffer = switch (this) {
                case HEAP -> ByteBuffer.allocate(bytes);
                case DIRECT -> ByteBuffer.allocateDirect(bytes);
                case HEAP_SLICE -> ByteBuffer.allocate(bytes + 3).position(3).slice();
                case DIRECT_SLICE -> ByteBuffer.allocateDirect(bytes + 3).position(3).slice();
            };
            byte[] guards = new byte[bytes];
            Arrays.fill(guards, GUARD);
            buffer.put(0, guards);
            // The kernels read and write little-endian whatever the buffer's order.
            return buffer.order(ByteOrder.BIG_ENDIAN);
        }
    }

    /**
     * The implementations: the one in use on this JVM ({@code ACCELERATED}: the block kernels, with
     * {@link VectorHalfKernels} for HALF and BFLOAT16 where the JVM has the Vector API), the block
     * kernels without it ({@code ARRAY_PASSES}: {@link HalfKernels}), and the scalar fallback.
     */
    enum Path {
        ACCELERATED, ARRAY_PASSES, SCALAR;

        /**
         * The paths that differ for {@code type}: {@code ARRAY_PASSES} only where it is not what
         * {@code ACCELERATED} already runs (a 16-bit type, with the Vector API in use).
         */
        static List<Path> of(ElementType type) {
            boolean sixteenBits = type == ElementType.HALF || type == ElementType.BFLOAT16;
            return sixteenBits && BlockReduction.VECTORS ? List.of(values()) : List.of(ACCELERATED, SCALAR);
        }

        private void apply(int kernel, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer first,
                int firstOffset, ByteBuffer src, int srcOffset, int count, int divisor) {
            Reduction.apply(kernel, type, dst, dstOffset, first, firstOffset, src, srcOffset, count, divisor,
                    this != SCALAR, this == ACCELERATED && BlockReduction.VECTORS);
        }

        void add(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
            apply(Reduction.ADD, type, dst, dstOffset, dst, dstOffset, src, srcOffset, count, 1);
        }

        void addAndDivide(ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count,
                int divisor) {
            if (this == ACCELERATED) {
                Reduction.addAndDivide(type, dst, dstOffset, src, srcOffset, count, divisor);
            } else {
                apply(divisor == 1 ? Reduction.ADD : Reduction.ADD_AND_DIVIDE, type, dst, dstOffset, dst, dstOffset,
                        src, srcOffset, count, divisor);
            }
        }

        void divide(ElementType type, ByteBuffer buffer, int offset, int count, int divisor) {
            if (this == ACCELERATED) {
                Reduction.divide(type, buffer, offset, count, divisor);
            } else if (divisor != 1) {
                apply(Reduction.DIVIDE, type, buffer, offset, buffer, offset, null, 0, count, divisor);
            }
        }

        void combine(ReduceOp op, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer a, int aOffset,
                ByteBuffer b, int bOffset, int count, int divisor) {
            if (this == ACCELERATED) {
                Reduction.combine(op, type, dst, dstOffset, a, aOffset, b, bOffset, count, divisor);
            } else {
                apply(Reduction.kernel(op, type, divisor), type, dst, dstOffset, a, aOffset, b, bOffset, count,
                        divisor);
            }
        }
    }

    /**
     * One kernel call, in place ({@code dst = dst op src}): through {@code add}, {@code addAndDivide},
     * {@code divide} (op null) or {@code combine}.
     */
    record Kernel(String method, ReduceOp op, int divisor) {
        static final List<Kernel> ALL = List.of(new Kernel("add", ReduceOp.SUM, 1),
                new Kernel("addAndDivide", ReduceOp.SUM, 1), new Kernel("addAndDivide", ReduceOp.SUM, 3),
                new Kernel("addAndDivide", ReduceOp.SUM, 4), new Kernel("addAndDivide", ReduceOp.SUM, 7),
                new Kernel("divide", null, 3), new Kernel("divide", null, 4),
                new Kernel("combine", ReduceOp.SUM, 1), new Kernel("combine", ReduceOp.AVG, 3),
                new Kernel("combine", ReduceOp.AVG, 8), new Kernel("combine", ReduceOp.PROD, 1),
                new Kernel("combine", ReduceOp.MIN, 1), new Kernel("combine", ReduceOp.MAX, 1));

        /** The kernels a type takes: integers are never divided. */
        static List<Kernel> of(ElementType type) {
            List<Kernel> kernels = new ArrayList<>();
            for (Kernel kernel : ALL) {
                if (type.isFloatingPoint() || (kernel.op != null && kernel.divisor == 1)) {
                    kernels.add(kernel);
                }
            }
            return kernels;
        }

        void run(Path path, ElementType type, ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset,
                int count) {
            switch (method) {
                case "add" -> path.add(type, dst, dstOffset, src, srcOffset, count);
                case "addAndDivide" -> path.addAndDivide(type, dst, dstOffset, src, srcOffset, count, divisor);
                case "divide" -> path.divide(type, dst, dstOffset, count, divisor);
                default -> path.combine(op, type, dst, dstOffset, dst, dstOffset, src, srcOffset, count, divisor);
            }
        }

        long expectedBits(ElementType type, long a, long b) {
            return ReductionCases.expectedBits(op, divisor, type, a, b);
        }

        /** The closed form at element {@code i} of the test data. */
        long expectedAt(ElementType type, int i) {
            return expectedBits(type, bits(type, i, true), bits(type, i, false));
        }

        @Override
        public String toString() {
            return method + (op == null ? "" : " " + op) + (divisor == 1 ? "" : " by " + divisor);
        }
    }

    /**
     * The closed form of one element, {@code (a op b) / divisor} (just {@code a / divisor} for a
     * null op), written out in Java arithmetic: FLOAT and DOUBLE rounded at each operation, HALF
     * and BFLOAT16 computed in float and rounded once by {@link HalfFloats}, integers wrapping.
     */
    static long expectedBits(ReduceOp op, int divisor, ElementType type, long a, long b) {
        switch (type) {
            case FLOAT: {
                float value = floats(op, divisor, Float.intBitsToFloat((int) a), Float.intBitsToFloat((int) b));
                return Float.floatToRawIntBits(value) & 0xFFFF_FFFFL;
            }
            case DOUBLE: {
                double x = Double.longBitsToDouble(a);
                double y = Double.longBitsToDouble(b);
                double value = op == null ? x : switch (op) {
                    case SUM, AVG -> x + y;
                    case PROD -> x * y;
                    case MIN -> Math.min(x, y);
                    case MAX -> Math.max(x, y);
                };
                return Double.doubleToRawLongBits(divisor == 1 ? value : value / divisor);
            }
            case HALF:
                return HalfFloats.floatToHalf(floats(op, divisor, HalfFloats.halfToFloat((short) a),
                        HalfFloats.halfToFloat((short) b))) & 0xFFFF;
            case BFLOAT16:
                return HalfFloats.floatToBfloat16(floats(op, divisor, HalfFloats.bfloat16ToFloat((short) a),
                        HalfFloats.bfloat16ToFloat((short) b))) & 0xFFFF;
            case INT:
                return integers(op, (int) a, (int) b) & 0xFFFF_FFFFL;
            default:
                return integers(op, a, b);
        }
    }

    private static float floats(ReduceOp op, int divisor, float x, float y) {
        float value = op == null ? x : switch (op) {
            case SUM, AVG -> x + y;
            case PROD -> x * y;
            case MIN -> Math.min(x, y);
            case MAX -> Math.max(x, y);
        };
        return divisor == 1 ? value : value / divisor;
    }

    /** INT operands sign-extended: the low 32 bits of the long result are the int result. */
    private static long integers(ReduceOp op, long a, long b) {
        return switch (op) {
            case SUM, AVG -> a + b;
            case PROD -> a * b;
            case MIN -> Math.min(a, b);
            case MAX -> Math.max(a, b);
        };
    }

    // Values with no pattern in their low bits, a few near the subnormal range, so that a kernel
    // that multiplied by the reciprocal of 3 or 7 instead of dividing, or added in another order,
    // would round some of them differently. Some HALF products overflow to infinity, and integer
    // sums and products wrap around.

    static float floatA(int i) {
        return i % 97 == 5 ? Float.MIN_NORMAL * (i % 11 + 1) : i * 0.37f - 11.5f;
    }

    static float floatB(int i) {
        return i % 97 == 5 ? -Float.MIN_NORMAL * 0.75f : 1f / (i + 3) + (i % 5) * 1e6f;
    }

    static double doubleA(int i) {
        return i % 97 == 5 ? Double.MIN_NORMAL * (i % 11 + 1) : i * 0.1 - Math.PI;
    }

    static double doubleB(int i) {
        return i % 97 == 5 ? -Double.MIN_NORMAL * 0.75 : Math.sqrt(i + 2) * ((i & 1) == 0 ? 1 : -1e-9);
    }

    private static float halfA(int i) {
        return i % 97 == 5 ? 0x1p-24f * (i % 11 + 1) : (i % 4001) * 0.37f - 11.5f;
    }

    private static float halfB(int i) {
        return i % 97 == 5 ? -0x1p-14f * 0.75f : 1f / (i + 3) + (i % 5) * 100f;
    }

    /** The raw bits of element {@code i} of the first operand (the destination) or the second. */
    static long bits(ElementType type, int i, boolean first) {
        return switch (type) {
            case FLOAT -> Float.floatToRawIntBits(first ? floatA(i) : floatB(i)) & 0xFFFF_FFFFL;
            case DOUBLE -> Double.doubleToRawLongBits(first ? doubleA(i) : doubleB(i));
            case HALF -> HalfFloats.floatToHalf(first ? halfA(i) : halfB(i)) & 0xFFFF;
            case BFLOAT16 -> HalfFloats.floatToBfloat16(first ? floatA(i) : floatB(i)) & 0xFFFF;
            case INT -> first ? i * 0x9E3779B9 : i % 7 == 3 ? Integer.MIN_VALUE + i : (i * 0x7FFFFFFF) ^ 0x1234;
            case LONG -> first ? i * 0x9E3779B97F4A7C15L
                    : i % 7 == 3 ? Long.MIN_VALUE + i : (i * 0x7FFFFFFFFFFFL) ^ 0x123456789L;
        };
    }

    static void fill(ElementType type, ByteBuffer buffer, int offset, int count, boolean first) {
        int size = type.bytes();
        for (int i = 0; i < count; i++) {
            putBits(buffer, offset + size * i, size, bits(type, i, first));
        }
    }

    /** Little-endian, independently of the buffer's order and of the code under test. */
    static void putBits(ByteBuffer buffer, int at, int bytes, long bits) {
        for (int b = 0; b < bytes; b++) {
            buffer.put(at + b, (byte) (bits >>> (8 * b)));
        }
    }

    static long getBits(ByteBuffer buffer, int at, int bytes) {
        long bits = 0;
        for (int b = bytes - 1; b >= 0; b--) {
            bits = (bits << 8) | (buffer.get(at + b) & 0xFF);
        }
        return bits;
    }

    /** Up to the capacity: a test may have moved the buffer's limit. */
    static void assertGuards(ByteBuffer buffer, int from, int to, String context) {
        ByteBuffer all = buffer.duplicate().clear();
        for (int i = 0; i < all.capacity(); i++) {
            if (i < from || i >= to) {
                assertEquals(GUARD, all.get(i),
                        "byte " + i + " outside [" + from + ", " + to + ") was written: " + context);
            }
        }
    }

    /** Each element's bits, unsigned, against {@code expected}. */
    static void assertElements(ElementType type, ByteBuffer buffer, int offset, int count, String context,
            IntToLongFunction expected) {
        int size = type.bytes();
        long mask = size == 8 ? -1L : (1L << (8 * size)) - 1;
        ByteBuffer all = buffer.duplicate().clear();
        for (int i = 0; i < count; i++) {
            long actual = getBits(all, offset + size * i, size);
            long wanted = expected.applyAsLong(i) & mask;
            if (actual != wanted) {
                assertEquals(Long.toHexString(wanted), Long.toHexString(actual),
                        "element " + i + " of " + count + ": " + context);
            }
        }
    }
}
