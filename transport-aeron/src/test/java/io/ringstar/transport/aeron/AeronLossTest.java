package io.ringstar.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.aeron.driver.MediaDriver;
import io.aeron.driver.ext.DebugReceiveChannelEndpoint;
import io.aeron.driver.ext.DebugSendChannelEndpoint;
import io.aeron.driver.ext.LossGenerator;
import io.ringstar.AllReduceAggregator;
import io.ringstar.DistributedConfig;
import io.ringstar.GradientAggregator;
import io.ringstar.ParameterServer;
import io.ringstar.PeerFailureException;
import io.ringstar.Transport;
import io.ringstar.Transports;
import io.ringstar.testing.ClosedForm;
import io.ringstar.testing.Ranks;
import io.ringstar.testing.TensorFixtures;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Packet loss on UDP: every rank's driver drops a tenth of the data frames it receives, through
 * Aeron's loss hook on the receive endpoint. Aeron's NAKs and retransmissions must repair every
 * gap, so both algorithms stay exact and the job ends well inside its timeout. And the loss of
 * every status message: the streams go unconnected, which a rank that only receives must notice.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AeronLossTest {
    private static final double LOSS_RATE = 0.10;

    /** Drops each frame with probability {@link #LOSS_RATE}, and counts what it saw and dropped. */
    private static final class CountingLoss implements LossGenerator {
        final AtomicLong frames = new AtomicLong();
        final AtomicLong dropped = new AtomicLong();
        private final SplittableRandom random;

        CountingLoss(long seed) {
            random = new SplittableRandom(seed);
        }

        @Override
        public synchronized boolean shouldDropFrame(java.net.InetSocketAddress address,
                org.agrona.concurrent.UnsafeBuffer buffer, int length) {
            frames.incrementAndGet();
            if (random.nextDouble() < LOSS_RATE) {
                dropped.incrementAndGet();
                return true;
            }
            return false;
        }
    }

    @Test
    // Above the group's watchdog (60 s timeout + 20 s) plus the job's (90 s), so that a hang is reported
    // by the watchdog that names the ranks, not by this.
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void bothAlgorithmsStayExactWhenATenthOfTheDataFramesIsLost() {
        int worldSize = 3;
        int count = 200_003;
        CountingLoss[] losses = new CountingLoss[worldSize];
        for (int rank = 0; rank < worldSize; rank++) {
            losses[rank] = new CountingLoss(42 + rank);
        }
        int[] next = {0};
        UnaryOperator<MediaDriver.Context> lossy = context -> {
            CountingLoss loss;
            synchronized (next) {
                loss = losses[next[0]++];
            }
            return context.receiveChannelEndpointSupplier((channel, dispatcher, status, ctx) ->
                    new DebugReceiveChannelEndpoint(channel, dispatcher, status, ctx, loss, (a, b, l) -> false));
        };
        Duration timeout = Duration.ofSeconds(60);
        // 8 KiB frames rather than loopback's 64 KiB: more frames, so more gaps for Aeron to repair.
        List<Transport> transports = AeronGroups.open(worldSize, timeout, Map.of(AeronTransport.MTU_OPTION, "8192"),
                lossy);
        long start = System.nanoTime();
        long jobNanos;
        try {
            Ranks.runAll(worldSize, Duration.ofSeconds(90), rank -> {
                DistributedConfig config = DistributedConfig.builder().worldSize(worldSize).rank(rank).timeout(timeout)
                        .build();
                for (GradientAggregator aggregator : new GradientAggregator[] {
                        new AllReduceAggregator(config, Transports.borrowed(transports.get(rank))),
                        new ParameterServer(config, Transports.borrowed(transports.get(rank)))}) {
                    try (aggregator) {
                        for (int step = 0; step < 3; step++) {
                            DataType type = step % 2 == 0 ? DataType.FLOAT : DataType.DOUBLE;
                            INDArray[] inputs = TensorFixtures.callTensors(type, rank, count);
                            INDArray[] averaged = aggregator.reduceGradients(inputs);
                            ClosedForm.check(aggregator + " step " + step, rank, averaged, inputs, type,
                                    (t, i) -> TensorFixtures.average(worldSize, t, i));
                        }
                    }
                }
                return null;
            });
            jobNanos = System.nanoTime() - start;
        } finally {
            transports.forEach(Transport::close);
        }
        long frames = 0;
        long dropped = 0;
        for (CountingLoss loss : losses) {
            frames += loss.frames.get();
            dropped += loss.dropped.get();
        }
        Duration job = Duration.ofNanos(jobNanos);
        System.out.printf("loss: %d of %d data frames dropped (%.1f%%) in %d ms%n", dropped, frames,
                100.0 * dropped / frames, job.toMillis());
        assertTrue(frames > 3000, "the job moved data through the lossy endpoints: " + frames + " frames");
        // The drop rate itself is the seeded random's, not the transport's; what matters is that frames
        // were lost (so the exact results above needed Aeron's repair) and that the repair was prompt:
        // a gap that waited for a timeout, or a retry after one, would take most of the 60 s.
        assertTrue(dropped > 0, "no frame was dropped, so nothing was repaired");
        assertTrue(job.compareTo(timeout.dividedBy(2)) < 0, "the lossy job took " + job + " of its " + timeout
                + " timeout");
    }

    @Test
    void aStreamThatStaysUnconnectedFailsThePeerAlsoForARankThatOnlyReceives() {
        // Once deaf, each driver drops every status message its publications get: both streams go unconnected,
        // while data and heartbeats still flow, so the images (and their liveness) stay.
        AtomicBoolean deaf = new AtomicBoolean();
        UnaryOperator<MediaDriver.Context> deafSenders = context -> context.sendChannelEndpointSupplier(
                (channel, status, ctx) -> new DebugSendChannelEndpoint(channel, status, ctx, (a, b, l) -> false,
                        (a, b, l) -> deaf.get()));
        List<Transport> group = AeronGroups.open(2, Duration.ofSeconds(30),
                Map.of(AeronTransport.LIVENESS_OPTION, "2000"), deafSenders);
        try {
            deaf.set(true);
            long start = System.nanoTime();
            PeerFailureException failed = assertThrows(PeerFailureException.class,
                    () -> group.get(0).recv(1, ByteBuffer.allocate(8)));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(0, failed.rank());
            assertEquals(1, failed.peerRank());
            assertTrue(failed.getMessage().contains("the stream to rank 1 stayed unconnected"), failed.getMessage());
            // Aeron's connection timeout (the liveness) plus this transport's liveness, well before the 30 s timeout.
            assertTrue(millis < 10_000, "noticed after " + millis + " ms");
        } finally {
            group.forEach(Transport::close);
        }
    }
}
