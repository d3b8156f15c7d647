package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.GradientBuckets;
import io.ringstar.ranks.Algorithm;
import io.ringstar.train.model.Network;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@code train --overlap}: the gradients averaged in buckets during the backward pass give the
 * single process's trajectory, as the blocking average does, and the same parameters on every rank.
 */
class OverlapTrainingTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void overlappedBucketsFollowTheSingleProcessLossCurveOnEveryRank() {
        TrainSettings settings = SyncTrainingTest.small("mlp");
        Trainer.Outcome single = SyncTrainingTest.reference(settings);
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        // 1 KiB buckets: the loss, dW2 [32,10], db2 with db1 [1,32], and dW1 [32,32] apart: several buckets.
        Trainer trainer = new Trainer(settings, Algorithm.RING, new PrintStream(printed, true, StandardCharsets.UTF_8))
                .withOverlap(new OverlapSettings(true, 1024));
        int ranks = 3;
        TrainGroup.Result result = TrainGroup.run(ranks, TIMEOUT, trainer);

        float[] expected = single.summary().lossCurve();
        for (int rank = 0; rank < ranks; rank++) {
            float[] curve = result.rank(rank).summary().lossCurve();
            for (int step = 0; step < expected.length; step++) {
                assertEquals(expected[step], curve[step], 1e-4 * Math.max(1, Math.abs(expected[step])),
                        "rank " + rank + " step " + step);
            }
            assertArrayEquals(result.rank(0).parameters()[0], result.rank(rank).parameters()[0], "W1 of rank " + rank);
            assertArrayEquals(result.rank(0).parameters()[2], result.rank(rank).parameters()[2], "W2 of rank " + rank);
        }
        assertTrue(expected[expected.length - 1] < 0.6 * expected[0], "the loss moved");
        String text = printed.toString(StandardCharsets.UTF_8);
        assertTrue(text.matches("(?s).*overlap: [2-9] buckets .*"), text);
        assertTrue(text.contains("train done: comm sync overlap, " + ranks + " ranks"), text);
        // comm is the wait after the backward pass; the figures beside it are the buckets' all-reduces'.
        assertEquals(4, text.lines().filter(line -> line.matches("step +\\d+/40 .*  comm +\\d+%  allReduce p50"
                + " [0-9.]+ ms p99 [0-9.]+ ms waiting +\\d+%  forward\\+backward [0-9.]+ ms")).count(), text);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSingleRankOverlapsWithAGroupOfOne() {
        TrainSettings settings = SyncTrainingTest.small("softmax");
        Trainer.Outcome single = SyncTrainingTest.reference(settings);
        Trainer.Outcome overlapped = new Trainer(settings, Algorithm.RING, new PrintStream(new ByteArrayOutputStream(),
                true)).withOverlap(new OverlapSettings(true, 1024)).runWithParameters(
                        DistributedConfig.builder().build(), null);
        for (int i = 0; i < single.parameters().length; i++) {
            assertArrayEquals(single.parameters()[i], overlapped.parameters()[i], 1e-6f, "tensor " + i);
        }
    }

    /** The sink sees the loss first, then the gradients last layer first, equal to the blocking call's. */
    @Test
    void theBackwardPassHandsOutEachGradientInBackwardOrder() {
        TrainSettings settings = SyncTrainingTest.small("mlp");
        Network network = Network.mlp(32, 32, 10);
        INDArray[] params = network.init(settings.seed());
        INDArray x = Nd4j.rand(8, 32);
        INDArray y = Nd4j.zeros(8, 10);
        for (int i = 0; i < 8; i++) {
            y.putScalar(i, i % 10, 1.0);
        }
        Network.LossAndGradients whole = network.lossAndGradients(params, x, y);
        List<String> seen = new ArrayList<>();
        network.lossAndGradients(params, x, y, new Network.Sink() {
            @Override
            public void loss(double loss) {
                seen.add("loss");
                assertEquals(whole.loss(), loss);
            }

            @Override
            public void gradient(int index, INDArray gradient) {
                seen.add(Integer.toString(index));
                assertEquals(whole.gradients()[index], gradient);
                gradient.close();
            }
        });
        assertEquals(List.of("loss", "2", "3", "0", "1"), seen);
        assertArrayEquals(new int[] {2, 3, 0, 1}, network.backwardOrder());
    }

    @Test
    void flagsAreCheckedBeforeAnyConnection() {
        assertEquals(OverlapSettings.NONE, OverlapSettings.fromFlags(false, null));
        assertEquals(new OverlapSettings(true, GradientBuckets.DEFAULT_BUCKET_BYTES),
                OverlapSettings.fromFlags(true, null));
        assertEquals(new OverlapSettings(true, 4L << 20), OverlapSettings.fromFlags(true, "4M"));
        IllegalArgumentException alone = assertThrows(IllegalArgumentException.class,
                () -> OverlapSettings.fromFlags(false, "4M"));
        assertTrue(alone.getMessage().contains("--bucket-bytes needs --overlap"), alone.getMessage());
        assertThrows(IllegalArgumentException.class, () -> OverlapSettings.fromFlags(true, "lots"));
        TrainSettings async = TrainSettings.fromFlags(Map.of("mode", "async"));
        IllegalArgumentException notAsync = assertThrows(IllegalArgumentException.class,
                () -> new Trainer(async, Algorithm.PS, System.out).withOverlap(new OverlapSettings(true, 1024)));
        assertTrue(notAsync.getMessage().contains("--overlap is for --mode sync"), notAsync.getMessage());
    }
}
