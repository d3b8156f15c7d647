package io.ringstar.bench.jmh;

import io.ringstar.tensor.ElementType;
import io.ringstar.tensor.Reduction;
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

    private ByteBuffer dst;
    private ByteBuffer src;

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

    @Benchmark
    public void copy(Bytes counter) {
        Reduction.copy(dst, 0, src, 0, bytes);
        counter.bytes += bytes;
    }
}
