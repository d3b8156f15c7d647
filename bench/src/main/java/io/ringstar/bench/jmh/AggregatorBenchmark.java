package io.ringstar.bench.jmh;

import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.Transport;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.NativeThreads;
import io.ringstar.ranks.RankThreads;
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
 * One {@code reduceGradients} call of the star and of the ring: 4 ranks as threads of the
 * benchmark JVM over the in-process transport, one float tensor per rank. With
 * {@code -p checksum=none,crc32c} it also gives the cost of the per-message CRC32C (option
 * {@value DistributedConfig#CHECKSUM_OPTION}) within one run. The rank threads live
 * for the whole trial; each invocation hands every rank one call and waits for all four, so the
 * score is the time of the slowest rank.
 *
 * <p>Memory: the set-up makes one call, checks its result and prints every rank's
 * {@code bufferBytes()} once per trial (a line starting {@code # bufferBytes}), the off-heap bytes
 * an aggregator holds between calls; they only grow with the largest call, so one call sets them.
 * (A JMH {@code @AuxCounters} counter would do, but JMH sums event counters over the iterations.)
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class AggregatorBenchmark extends BenchmarkDefaults {
    private static final int WORLD_SIZE = 4;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final double EXPECTED_AVERAGE = 2.5;

    @Param({"ps", "ring"})
    public String algorithm;

    /** Size of the one tensor each rank passes, in bytes. */
    @Param({"4194304", "67108864"})
    public int bytes;

    /** Option {@value DistributedConfig#CHECKSUM_OPTION}: none, or crc32c on every message. */
    @Param({DistributedConfig.CHECKSUM_NONE})
    public String checksum;

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
            DistributedConfig config = DistributedConfig.builder()
                    .worldSize(WORLD_SIZE).rank(rank).timeout(TIMEOUT)
                    .option(DistributedConfig.CHECKSUM_OPTION, checksum).build();
            aggregators.add(Algorithm.of(algorithm).create(config, transports.get(rank)));
        }
        int count = bytes / Float.BYTES;
        gradients = threads.run(rank -> Nd4j.create(DataType.FLOAT, count).assign(rank + 1), TIMEOUT);
        // Ranks hold 1..4, so every element of the average is exactly 2.5.
        List<Boolean> right = threads.run(rank -> {
            INDArray averaged = aggregators.get(rank).reduceGradients(gradients.get(rank))[0];
            boolean exact = averaged.minNumber().doubleValue() == EXPECTED_AVERAGE
                    && averaged.maxNumber().doubleValue() == EXPECTED_AVERAGE;
            averaged.close();
            return exact;
        }, TIMEOUT.multipliedBy(2));
        if (right.contains(false)) {
            throw new IllegalStateException(algorithm + " averaged wrongly on ranks " + right
                    + " (true = every element is " + EXPECTED_AVERAGE + ")");
        }
        List<Long> perRank = aggregators.stream().map(Algorithm::bufferBytes).toList();
        System.out.println();
        System.out.println("# bufferBytes per rank, " + algorithm + ", " + bytes + " B, checksum " + checksum + ": "
                + perRank);
    }

    @Benchmark
    public void reduceGradients() {
        threads.run(rank -> {
            INDArray[] averaged = aggregators.get(rank).reduceGradients(gradients.get(rank));
            // Freed at once, as the bench command does, so that ND4J's memory pressure stays out.
            for (INDArray result : averaged) {
                result.close();
            }
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
