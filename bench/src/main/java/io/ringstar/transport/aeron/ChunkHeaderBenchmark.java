package io.ringstar.transport.aeron;

import io.ringstar.bench.jmh.BenchmarkDefaults;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The Aeron transport's 16-byte {@link ChunkHeader}: {@code writeAndRead} writes a DATA header as
 * a send does and reads it back as the receiver does (magic, kind, value). Lives in the transport's
 * package, inside the bench module, because the header is the transport's private wire format; the
 * shaded jar holds both, so they share the package at run time.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ChunkHeaderBenchmark extends BenchmarkDefaults {
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[ChunkHeader.LENGTH]);
    private long length;

    @Benchmark
    public long writeAndRead() {
        // A new length each time, so that neither the write nor the read folds into a constant.
        ChunkHeader.write(buffer, 0, ChunkHeader.DATA, ++length);
        if (!ChunkHeader.hasMagic(buffer, 0, ChunkHeader.LENGTH) || ChunkHeader.kind(buffer, 0) != ChunkHeader.DATA) {
            throw new IllegalStateException("the header just written does not read back as DATA");
        }
        return ChunkHeader.value(buffer, 0);
    }
}
