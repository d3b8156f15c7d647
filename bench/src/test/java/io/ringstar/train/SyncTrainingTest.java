package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.ranks.Algorithm;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Synchronous data-parallel training on N ranks follows one process training on the same global
 * batches: the average of equal shards' mean gradients is the global batch's mean gradient.
 */
class SyncTrainingTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** Small enough to run in a second or two, big enough that the loss moves a lot in 40 steps. */
    static TrainSettings small(String model) {
        return TrainSettings.fromFlags(Map.of("model", model, "samples", "3000", "features", "32", "hidden", "32",
                "steps", "40", "batch-size", "120", "lr", "0.2", "eval-size", "500", "log-every", "10",
                "seed", "7"));
    }

    static Trainer.Outcome reference(TrainSettings settings) {
        // One process, the same code path, LocalAggregator: the trajectory to match.
        return new Trainer(settings, Algorithm.RING, new PrintStream(new ByteArrayOutputStream(), true))
                .runWithParameters(DistributedConfig.builder().build(), null);
    }

    @ParameterizedTest(name = "{0} {1} on {2} ranks")
    @CsvSource({"ring, softmax, 3", "ps, softmax, 3", "ring, mlp, 3", "ps, mlp, 3", "ring, mlp, 4", "ps, softmax, 4"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void nRanksFollowTheSingleProcessLossCurve(String algorithm, String model, int ranks) throws Exception {
        TrainSettings settings = small(model);
        Trainer.Outcome single = reference(settings);
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        TrainGroup.Result result = TrainGroup.run(ranks, TIMEOUT,
                new Trainer(settings, Algorithm.of(algorithm), new PrintStream(printed, true, StandardCharsets.UTF_8)));

        float[] expected = single.summary().lossCurve();
        for (int rank = 0; rank < ranks; rank++) {
            float[] curve = result.rank(rank).summary().lossCurve();
            assertEquals(expected.length, curve.length);
            for (int step = 0; step < expected.length; step++) {
                double tolerance = 1e-4 * Math.max(1, Math.abs(expected[step]));
                assertEquals(expected[step], curve[step], tolerance, "rank " + rank + " step " + step);
            }
        }
        // Learning happened, so the agreement above is about a moving curve, not a flat one.
        assertTrue(expected[expected.length - 1] < 0.6 * expected[0],
                "loss went from " + expected[0] + " to " + expected[expected.length - 1]);

        // Every rank applied the same averaged gradients: bit-identical parameters.
        float[][] rank0 = result.rank(0).parameters();
        assertTrue(rank0.length > 0, "a model has parameters");
        assertEquals(single.parameters().length, rank0.length, "tensors of the single process and of rank 0");
        for (int rank = 1; rank < ranks; rank++) {
            float[][] other = result.rank(rank).parameters();
            assertEquals(rank0.length, other.length, "tensors of rank " + rank);
            for (int i = 0; i < rank0.length; i++) {
                assertArrayEquals(rank0[i], other[i], "tensor " + i + " of rank " + rank);
            }
        }
        // ...and the same parameters as the single process, up to float rounding.
        for (int i = 0; i < rank0.length; i++) {
            for (int j = 0; j < rank0[i].length; j++) {
                assertEquals(single.parameters()[i][j], rank0[i][j], 1e-4 + 1e-3 * Math.abs(single.parameters()[i][j]),
                        "tensor " + i + " element " + j);
            }
        }
        assertEquals(single.summary().heldOutAccuracy(), result.rank(0).summary().heldOutAccuracy(), 0.01);
        // Rank 0 takes its final accuracy from its last progress line; the other ranks, holding the
        // same parameters, evaluate them afresh: the two ways must agree.
        for (int rank = 1; rank < ranks; rank++) {
            assertEquals(result.rank(0).summary().heldOutAccuracy(), result.rank(rank).summary().heldOutAccuracy(),
                    "rank " + rank);
        }

        // Only rank 0 prints: one start line, steps/logEvery progress lines, one summary.
        String text = printed.toString(StandardCharsets.UTF_8);
        assertEquals(1, count(text, "train: "), text);
        assertEquals(4, count(text, "\nstep "), text);
        assertEquals(1, count(text, "train done: " + algorithm + " sync, " + ranks + " ranks"), text);
        // Each line's communication figures come from the aggregator's statistics of its reduceGradients calls.
        assertEquals(4, text.lines().filter(line -> line.matches("step +\\d+/40  loss [0-9.]+  held-out acc +[0-9.]+%"
                + "  step +[0-9.]+ ms  comm +\\d+%  reduceGradients p50 [0-9.]+ ms p99 [0-9.]+ ms waiting +\\d+%"))
                .count(), text);
        for (int rank = 0; rank < ranks; rank++) {
            double share = result.rank(rank).summary().communicationShare();
            assertTrue(share > 0 && share <= 1, "rank " + rank + ": communication share " + share);
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aRankTrainingOnlyItsShardWouldNotMatchSoTheToleranceIsMeaningful() {
        // The reference with a third of the batch (one rank's shard, no averaging) must differ
        // from the full-batch reference by far more than the tolerance the test above allows.
        TrainSettings full = small("softmax");
        TrainSettings shardOnly = TrainSettings.fromFlags(Map.of("model", "softmax", "samples", "3000",
                "features", "32", "hidden", "32", "steps", "40", "batch-size", "40", "lr", "0.2", "eval-size", "500",
                "log-every", "10", "seed", "7"));
        float[] a = reference(full).summary().lossCurve();
        float[] b = reference(shardOnly).summary().lossCurve();
        double largest = 0;
        for (int i = 0; i < a.length; i++) {
            largest = Math.max(largest, Math.abs(a[i] - b[i]));
        }
        assertTrue(largest > 100 * 1e-4 * 3, "largest difference " + largest);
    }

    @Test
    void aGlobalBatchThatDoesNotSplitEvenlyIsRefusedNamingTheFlag() throws Exception {
        TrainSettings settings = TrainSettings.fromFlags(Map.of("samples", "1000", "features", "8", "steps", "2",
                "batch-size", "64", "eval-size", "100"));
        TrainGroup.Result result = TrainGroup.run(3, TIMEOUT, new Trainer(settings, Algorithm.RING, System.out));
        Throwable error = result.errors().get(0);
        assertTrue(error instanceof IllegalArgumentException && error.getMessage().contains("--batch-size 64")
                && error.getMessage().contains("multiple of 3"), String.valueOf(error));
    }

    private static int count(String text, String needle) {
        int count = 0;
        for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
            count++;
        }
        return count;
    }
}
