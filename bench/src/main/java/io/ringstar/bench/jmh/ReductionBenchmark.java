package io.ringstar.bench.jmh;

import io.ringstar.ReduceOp;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.HalfFloats;
import io.ringstar.internal.tensor.Reduction;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The reduction kernels against a plain copy of the same bytes, on little-endian buffers like
 * the collectives' buckets (ND4J's direct memory) and receive buffers (direct or heap). The
 * project asks the kernels to run at memory speed, at least 0.9 times {@code copy}: per byte of
 * the buffer, {@code add} reads two and writes one, {@code copy} reads one and writes one (and
 * reads the destination's cache line before writing it), so both move about as many bytes.
 *
 * <p>Each result has a secondary score {@code :bytes}, the buffer bytes processed per second
 * (divide by 1e9 for GB/s); compare those of the kernels and {@code copy} at one size and one
 * {@code memory}. The primary score counts calls, which differ in bytes between sizes.
 *
 * <p>{@code combine} is {@link Reduction#combine} of every op and element type (its own
 * parameters {@code op} and {@code type}, in {@link Combine}, so the other benchmarks are not
 * multiplied by them), in place like {@code add}: e.g.
 * {@code ringstar jmh ReductionBenchmark.combine -p type=HALF,INT -p op=SUM,MAX}.
 *
 * <p>HALF and BFLOAT16 take the incubating Vector API where the JVM has the module; JMH's forks
 * inherit the launching JVM's flags, so compare
 * {@code RINGSTAR_JAVA_OPTS="--add-modules jdk.incubator.vector" ringstar jmh ...} with a run
 * without it (the same bits either way; the tests check both).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ReductionBenchmark extends BenchmarkDefaults {

    /**
     * Size of each buffer in bytes: in the first-level cache, the size of one ring chunk, and
     * beyond the second-level cache (two buffers of 64 MiB).
     */
    @Param({"4096", "1048576", "67108864"})
    public int bytes;

    /**
     * Where the buffers live: {@code direct} both (a bucket and a direct receive buffer),
     * {@code heapSource} a direct destination and a heap source (a heap receive buffer), {@code heap}
     * both on the heap.
     */
    @Param({"direct", "heapSource", "heap"})
    public String memory;

    /** The divisor of {@code addAndDivide*}, the world size: 3 divides, a power of two multiplies. */
    @Param({"3"})
    public int divisor;

    ByteBuffer dst;
    ByteBuffer src;

    /** Buffer bytes processed, reported by JMH per second as the score {@code :bytes}. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    @Setup(Level.Trial)
    public void allocate() {
        if (!memory.equals("direct") && !memory.equals("heapSource") && !memory.equals("heap")) {
            throw new IllegalArgumentException("memory is direct, heapSource or heap, not " + memory);
        }
        boolean directDst = !memory.equals("heap");
        boolean directSrc = memory.equals("direct");
        dst = (directDst ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes))
                .order(ByteOrder.LITTLE_ENDIAN);
        src = (directSrc ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes))
                .order(ByteOrder.LITTLE_ENDIAN);
        // Small positive normal values, read as floats (1e-3) or as doubles (about 3e-26): the sums
        // grow slowly from zero (or settle, divided) and never reach subnormals or infinity, which
        // would slow the floating-point unit down and measure something else.
        for (int at = 0; at + Float.BYTES <= bytes; at += Float.BYTES) {
            src.putFloat(at, 1e-3f);
        }
    }

    @Benchmark
    public void addFloat(Bytes counter) {
        Reduction.add(ElementType.FLOAT, dst, 0, src, 0, bytes / Float.BYTES);
        counter.bytes += bytes;
    }

    @Benchmark
    public void addDouble(Bytes counter) {
        Reduction.add(ElementType.DOUBLE, dst, 0, src, 0, bytes / Double.BYTES);
        counter.bytes += bytes;
    }

    @Benchmark
    public void addAndDivideFloat(Bytes counter) {
        Reduction.addAndDivide(ElementType.FLOAT, dst, 0, src, 0, bytes / Float.BYTES, divisor);
        counter.bytes += bytes;
    }

    @Benchmark
    public void addAndDivideDouble(Bytes counter) {
        Reduction.addAndDivide(ElementType.DOUBLE, dst, 0, src, 0, bytes / Double.BYTES, divisor);
        counter.bytes += bytes;
    }

    /** The op and element type of {@code combine}, whose source it fills with values of that type. */
    @State(Scope.Thread)
    public static class Combine {
        /** A {@link ReduceOp}; AVG divides by {@code divisor}. */
        @Param({"SUM", "MAX", "PROD"})
        public String op;

        /** An {@link ElementType}. */
        @Param({"FLOAT", "DOUBLE", "HALF", "BFLOAT16", "INT", "LONG"})
        public String type;

        ReduceOp reduceOp;
        ElementType elementType;
        int count;
        int divisor;

        /**
         * Fills the source with 1 for PROD (the destination, from 0, stays 0) and 1e-3 (3 for
         * integers) otherwise: sums grow slowly, or stop growing once 1e-3 is below half a unit
         * in the last place of a 16-bit float, and no value becomes subnormal or infinite.
         */
        @Setup(Level.Trial)
        public void fill(ReductionBenchmark buffers) {
            reduceOp = ReduceOp.valueOf(op);
            elementType = ElementType.valueOf(type);
            count = buffers.bytes / elementType.bytes();
            divisor = reduceOp == ReduceOp.AVG ? buffers.divisor : 1;
            double value = reduceOp == ReduceOp.PROD ? 1 : elementType.isFloatingPoint() ? 1e-3 : 3;
            for (int i = 0; i < count; i++) {
                put(elementType, buffers.src, i * elementType.bytes(), value);
            }
        }
    }

    /** Writes {@code value} as one element of {@code type} at byte {@code at}. */
    static void put(ElementType type, ByteBuffer buffer, int at, double value) {
        switch (type) {
            case FLOAT -> buffer.putFloat(at, (float) value);
            case DOUBLE -> buffer.putDouble(at, value);
            case HALF -> buffer.putShort(at, HalfFloats.floatToHalf((float) value));
            case BFLOAT16 -> buffer.putShort(at, HalfFloats.floatToBfloat16((float) value));
            case INT -> buffer.putInt(at, (int) value);
            case LONG -> buffer.putLong(at, (long) value);
            default -> throw new IllegalArgumentException("no value of " + type);
        }
    }

    @Benchmark
    public void combine(Combine combine, Bytes counter) {
        Reduction.combine(combine.reduceOp, combine.elementType, dst, 0, dst, 0, src, 0, combine.count,
                combine.divisor);
        counter.bytes += bytes;
    }

    @Benchmark
    public void copy(Bytes counter) {
        Reduction.copy(dst, 0, src, 0, bytes);
        counter.bytes += bytes;
    }
}
