package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringstar.bench.jmh.BenchmarkDefaults;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The Netty transport's 16-byte {@link Frame} header as a send writes it ({@link Frame#writeHeader}
 * into a direct buffer) before a message's first frame. Decoding is not measured here: it happens
 * inside {@code FrameDecoder}, interleaved with the connection's state, and is part of the
 * ping-pong latency instead. Lives in the transport's package, inside the bench module, because the
 * frame is the transport's private wire format; the shaded jar holds both, so they share the
 * package at run time.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FrameHeaderBenchmark extends BenchmarkDefaults {
    private final ByteBuf frame = Unpooled.directBuffer(Frame.HEADER_BYTES, Frame.HEADER_BYTES);
    private long length;

    @Benchmark
    public ByteBuf write() {
        frame.clear();
        // A new length each time, so that the write cannot fold into a constant.
        Frame.writeHeader(frame, 1024, Frame.DATA, Frame.FIRST, ++length);
        return frame;
    }

    @TearDown(Level.Trial)
    public void release() {
        frame.release();
    }
}
