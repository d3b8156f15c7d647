package io.ringstar.train.convnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.ranks.RankThreads;
import io.ringstar.train.TrainSettings;
import io.ringstar.transport.inproc.InProcessTransport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ConvNet's training loop on a small synthetic set, in one JVM: one rank alone, two ranks as
 * threads over the in-process transport with the ring (which must follow the one rank's trajectory on the
 * same global batches, with bit-identical parameters on both ranks), and the asynchronous server.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConvNetTrainerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path noFashionMnist;

    /** 40 steps of 32 synthetic images: a second or two, and well above chance at the end. */
    private static TrainSettings small() {
        return TrainSettings.fromFlags(Map.of("model", "convnet", "steps", "40", "batch-size", "32", "samples",
                "1500", "eval-size", "300", "log-every", "20", "seed", "5", "lr", "0.1"));
    }

    private ConvNetTrainer trainer(ByteArrayOutputStream printed) {
        return new ConvNetTrainer(small(), new PrintStream(printed, true, StandardCharsets.UTF_8),
                noFashionMnist.resolve("absent"));
    }

    private static List<ConvNetOutcome> runGroup(ConvNetTrainer trainer, ConvNetRun run, int worldSize) {
        List<Transport> transports = InProcessTransport.createGroup(worldSize, TIMEOUT);
        try (RankThreads threads = new RankThreads(worldSize)) {
            return threads.run(rank -> trainer.run(run, DistributedConfig.builder().worldSize(worldSize).rank(rank)
                    .timeout(TIMEOUT).build(), transports.get(rank)), TIMEOUT.multipliedBy(2));
        } finally {
            transports.forEach(Transport::close);
        }
    }

    @Test
    void twoRanksFollowOneRankOnTheSameGlobalBatches() {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        ConvNetTrainer trainer = trainer(printed);
        ConvNetOutcome alone = trainer.run(ConvNetRun.RING, DistributedConfig.builder().build(), null);
        List<ConvNetOutcome> pair = runGroup(trainer, ConvNetRun.RING, 2);

        // Learning happened: from chance (10%) to well above it on images it never trained on.
        assertTrue(alone.summary().heldOutAccuracy() > 0.3, "accuracy " + alone.summary().heldOutAccuracy());
        AccuracyCurve curve = alone.curve();
        assertEquals(3, curve.seconds().length, "at the start, after step 20 and after step 40");
        assertTrue(curve.accuracy()[0] < curve.accuracy()[2], "accuracy rose: " + List.of(curve.accuracy()));
        // Both ranks apply the same averaged gradient: bit-identical parameters...
        assertArrayEquals(pair.get(0).parameters(), pair.get(1).parameters());
        assertEquals(ConvNet.PARAMETERS, pair.get(0).parameters().length);
        // ...and the one rank's, up to float rounding (the average of two half-batch means is the batch mean).
        float[] expected = alone.parameters();
        float[] actual = pair.get(0).parameters();
        double largest = 0;
        for (int i = 0; i < expected.length; i++) {
            largest = Math.max(largest, Math.abs(expected[i] - actual[i]));
        }
        assertTrue(largest < 1e-4, "largest difference from the single rank " + largest);
        String output = printed.toString(StandardCharsets.UTF_8);
        assertTrue(output.contains("train done: ring sync, 2 ranks, convnet: 40 steps"), output);
        assertTrue(output.contains("ring sync, 1 rank, global batch 32 (32 per rank)"), output);
    }

    @Test
    void asyncWorkerReportsAndRankZeroGetsItsCurve() {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        List<ConvNetOutcome> ranks = runGroup(trainer(printed), ConvNetRun.ASYNC, 3);

        String output = printed.toString(StandardCharsets.UTF_8);
        assertTrue(output.contains("train done: ps async, 3 ranks, convnet: 40 steps"), output);
        assertTrue(ranks.get(1).summary().heldOutAccuracy() > 0.3, output);
        // Both workers end with the servers' final parameters.
        assertArrayEquals(ranks.get(1).parameters(), ranks.get(2).parameters());
        // Rank 0 serves and measures nothing, yet holds the reporting worker's curve for the plot.
        AccuracyCurve atServer = ranks.get(0).curve();
        assertNotNull(atServer);
        assertArrayEquals(ranks.get(1).curve().accuracy(), atServer.accuracy());
        assertEquals(3, atServer.accuracy().length);
        assertTrue(atServer.accuracy()[2] > 0.3, List.of(atServer.accuracy()).toString());
    }
}
