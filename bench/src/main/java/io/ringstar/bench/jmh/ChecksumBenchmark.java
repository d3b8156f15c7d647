package io.ringstar.bench.jmh;

import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transport;
import io.ringstar.bench.NativeThreads;
import io.ringstar.bench.RankThreads;
import io.ringstar.transport.inproc.InProcessTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
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
 * What the per-message CRC32C costs: one ring {@code reduceGradients} of a 16 MiB float tensor, 3
 * ranks as threads of the benchmark JVM over the in-process transport, with the option
 * {@value DistributedConfig#CHECKSUM_OPTION} {@code none} and {@code crc32c} in the same run.
 * Each rank checksums every message it sends and every one it receives, so the checksum reads
 * {@code 4(n-1)/n} of the tensor per rank and call. The score is the time of the slowest rank.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class ChecksumBenchmark extends BenchmarkDefaults {
    private static final int WORLD_SIZE = 3;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** Ranks hold 1, 2 and 3: every element of the average is exactly 2. */
    private static final double EXPECTED_AVERAGE = 2.0;

    @Param({DistributedConfig.CHECKSUM_NONE, DistributedConfig.CHECKSUM_CRC32C})
    public String checksum;

    /** Size of the one tensor each rank passes, in bytes. */
    @Param({"16777216"})
    public int bytes;

    private RankThreads threads;
    private List<GradientAggregator> aggregators;
    private List<INDArray> gradients;

    @Setup(Level.Trial)
    public void open() {
        NativeThreads.limitForRankThreads();
        threads = new RankThreads(WORLD_SIZE);
        List<Transport> transports = InProcessTransport.createGroup(WORLD_SIZE, TIMEOUT);
        aggregators = new ArrayList<>();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            aggregators.add(new AllReduceAggregator(DistributedConfig.builder().worldSize(WORLD_SIZE).rank(rank)
                    .timeout(TIMEOUT).option(DistributedConfig.CHECKSUM_OPTION, checksum).build(), transports.get(rank)));
        }
        gradients = threads.run(rank -> Nd4j.create(DataType.FLOAT, bytes / Float.BYTES).assign(rank + 1), TIMEOUT);
        // Checked once before timing: a benchmark of wrong results measures nothing.
        List<Boolean> right = threads.run(rank -> {
            INDArray averaged = aggregators.get(rank).reduceGradients(gradients.get(rank))[0];
            boolean exact = averaged.minNumber().doubleValue() == EXPECTED_AVERAGE
                    && averaged.maxNumber().doubleValue() == EXPECTED_AVERAGE;
            averaged.close();
            return exact;
        }, TIMEOUT.multipliedBy(2));
        if (right.contains(false)) {
            throw new IllegalStateException("checksum " + checksum + ": the ring averaged wrongly on ranks " + right);
        }
    }

    @Benchmark
    public void ringAllReduce() {
        threads.run(rank -> {
            aggregators.get(rank).reduceGradients(gradients.get(rank))[0].close();
            return null;
        }, TIMEOUT.multipliedBy(2));
    }

    @TearDown(Level.Trial)
    public void close() {
        aggregators.forEach(GradientAggregator::close);
        gradients.forEach(INDArray::close);
        threads.close();
    }
}
