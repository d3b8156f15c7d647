package io.ringstar.bench.jmh;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Round-trip latency of one message between 2 ranks of this JVM, per transport: rank 0 sends
 * {@code bytes} bytes, rank 1's echo thread sends them back ({@link PingPongPair}). Sampled, so JMH
 * prints the percentiles (p0.50, p0.99, ...) of single round trips in microseconds, not only a mean.
 * Half a round trip is the one-way latency.
 *
 * <p>Before timing, the set-up checks that one round trip returns exactly the bytes sent. The
 * transports run with their defaults (Aeron: back-off idling, shared driver threading), so the
 * numbers are what a job with default settings gets, including the cost of waking idle threads.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PingPongBenchmark extends BenchmarkDefaults {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** One of {@link PingPongPair#MEDIA}. */
    @Param({"inproc", "netty", "aeron-udp", "aeron-ipc"})
    public String transport;

    /** Message length in bytes, each way. */
    @Param({"8", "1024", "65536"})
    public int bytes;

    private PingPongPair pair;
    private ByteBuffer ping;
    private ByteBuffer pong;

    @Setup(Level.Trial)
    public void open() {
        pair = PingPongPair.open(transport, bytes, TIMEOUT);
        ping = ByteBuffer.allocateDirect(bytes);
        for (int i = 0; i < bytes; i++) {
            ping.put(i, (byte) (i * 31 + 7));
        }
        pong = ByteBuffer.allocateDirect(bytes);
        try {
            pair.roundTrip(ping, pong);
            pong.flip();
            if (!pong.equals(ping)) {
                throw new IllegalStateException(transport + " ping-pong of " + bytes + " B came back different, first"
                        + " difference at byte " + pong.mismatch(ping));
            }
        } catch (RuntimeException | Error e) {
            // JMH runs no tear-down after a failed set-up; the pair's threads and driver must not outlive it.
            try {
                pair.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    @Benchmark
    public ByteBuffer roundTrip() {
        pong.clear();
        pair.roundTrip(ping, pong);
        return pong;
    }

    @TearDown(Level.Trial)
    public void close() {
        pair.close();
    }
}
