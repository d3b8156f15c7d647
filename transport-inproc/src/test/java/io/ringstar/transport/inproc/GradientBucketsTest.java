package io.ringstar.transport.inproc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientBuckets;
import io.ringstar.Transport;
import io.ringstar.testing.Ranks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@link GradientBuckets} over three in-process ranks: how gradients are cut into buckets, that
 * every bucket is averaged in place whatever order the gradients are marked in on each rank, over
 * several steps, and the errors of a step that marks too little or twice.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GradientBucketsTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);
    private static final int WORLD_SIZE = 3;

    private static Communicator communicator(List<Transport> group, int rank) {
        DistributedConfig config = DistributedConfig.builder().worldSize(WORLD_SIZE).rank(rank)
                .timeout(Duration.ofSeconds(30)).transport("inproc").build();
        return new Communicator(config, group.get(rank));
    }

    @Test
    void bucketsStartSmallThenTakeTheGivenSize() {
        List<Transport> group = InProcessTransport.createGroup(1, Duration.ofSeconds(10));
        DistributedConfig config = DistributedConfig.builder().worldSize(1).rank(0).transport("inproc").build();
        try (Communicator comm = new Communicator(config, group.get(0))) {
            // 1 MiB = 262 144 floats: the first bucket closes before the gradient that would pass it;
            // the 8 MB gradient is larger than a bucket of 4 MiB, so it has one of its own, and the
            // last small one cannot join it.
            INDArray a = Nd4j.create(DataType.FLOAT, 200_000);
            INDArray b = Nd4j.create(DataType.FLOAT, 100_000);
            INDArray c = Nd4j.create(DataType.FLOAT, 10);
            INDArray d = Nd4j.create(DataType.DOUBLE, 1_000_000);
            INDArray e = Nd4j.create(DataType.FLOAT, 10);
            GradientBuckets buckets = new GradientBuckets(comm, 4L << 20, a, b, c, d, e);
            assertEquals(4, buckets.bucketCount());
            assertArrayEquals(new int[] {0, 1, 1, 2, 3},
                    new int[] {buckets.bucketOf(0), buckets.bucketOf(1), buckets.bucketOf(2), buckets.bucketOf(3),
                            buckets.bucketOf(4)});
        }
    }

    @Test
    void everyBucketIsAveragedInPlaceWhateverTheMarkingOrder() {
        List<Transport> group = InProcessTransport.createGroup(WORLD_SIZE, Duration.ofSeconds(30));
        Ranks.run(WORLD_SIZE, LIMIT, rank -> {
            try (Communicator comm = communicator(group, rank)) {
                // Small buckets (64 bytes), so that five gradients make several buckets.
                INDArray[] gradients = {Nd4j.create(DataType.FLOAT, 7), Nd4j.create(DataType.DOUBLE, 13),
                        Nd4j.create(DataType.FLOAT, 2, 3), Nd4j.create(DataType.FLOAT, 1),
                        Nd4j.create(DataType.DOUBLE, 31)};
                GradientBuckets buckets = new GradientBuckets(comm, 64, gradients);
                assertTrue(buckets.bucketCount() >= 3, "buckets: " + buckets.bucketCount());
                for (int step = 0; step < 4; step++) {
                    for (INDArray gradient : gradients) {
                        gradient.assign(rank + 10 * step);
                    }
                    // Each rank marks in its own order; buckets still start in order on every rank.
                    for (int gradient : order(rank, step, gradients.length)) {
                        buckets.markReady(gradient);
                    }
                    buckets.awaitAll();
                    double expected = (0 + 1 + 2) / 3.0 + 10 * step;
                    for (INDArray gradient : gradients) {
                        assertEquals(expected, gradient.minNumber().doubleValue(), 0.0, "step " + step);
                        assertEquals(expected, gradient.maxNumber().doubleValue(), 0.0, "step " + step);
                    }
                }
            }
            return null;
        }).forEach(Ranks.Outcome::valueOrFail);
    }

    /** A permutation of {@code 0..count-1} that differs by rank and step. */
    private static int[] order(int rank, int step, int count) {
        int[] order = new int[count];
        for (int k = 0; k < count; k++) {
            order[k] = rank % 2 == 0 ? (k + step) % count : (count - 1 - k + step) % count;
        }
        return order;
    }

    @Test
    void aStepThatLeavesAGradientUnmarkedOrMarksOneTwiceIsRefused() {
        List<Transport> group = InProcessTransport.createGroup(1, Duration.ofSeconds(10));
        DistributedConfig config = DistributedConfig.builder().worldSize(1).rank(0).transport("inproc").build();
        try (Communicator comm = new Communicator(config, group.get(0))) {
            INDArray a = Nd4j.create(DataType.FLOAT, 4);
            INDArray b = Nd4j.create(DataType.FLOAT, 4);
            GradientBuckets buckets = new GradientBuckets(comm, 8, a, b);
            buckets.markReady(1);
            IllegalStateException twice = assertThrows(IllegalStateException.class, () -> buckets.markReady(1));
            assertEquals("gradient 1 was already marked ready in this step", twice.getMessage());
            IllegalStateException missing = assertThrows(IllegalStateException.class, buckets::awaitAll);
            assertEquals("gradients 0 were not marked ready in this step; 0 of 2 buckets started",
                    missing.getMessage());
            // The next step starts afresh: awaitAll would throw if a bucket had not started.
            a.assign(3);
            b.assign(-5);
            buckets.markReady(0);
            buckets.markReady(1);
            buckets.awaitAll();
            assertEquals(3.0, a.getDouble(0), 0.0);
            assertEquals(-5.0, b.getDouble(3), 0.0);
        }
    }
}
