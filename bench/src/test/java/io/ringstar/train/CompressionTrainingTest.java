package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.ranks.Algorithm;
import io.ringstar.ranks.RankThreads;
import io.ringstar.transport.inproc.InProcessTransport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Training with option compression ({@code --option compression=...} of {@code train}, which reaches
 * the aggregator through the DistributedConfig) ends within 1.5 points of the uncompressed held-out
 * accuracy on the same seed: fp16, bf16 and topk:0.1 (with its error feedback), sync, on the star
 * and on the ring, 3 ranks in this JVM.
 */
class CompressionTrainingTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String[] COMPRESSIONS = {"fp16", "bf16", "topk:0.1"};

    private static TrainSettings settings() {
        return TrainSettings.fromFlags(Map.of("samples", "3000", "features", "32", "hidden", "32", "steps", "60",
                "batch-size", "120", "lr", "0.2", "eval-size", "600", "log-every", "60", "seed", "11"));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ps", "ring"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void compressedTrainingKeepsTheHeldOutAccuracy(String algorithm) {
        TrainSettings settings = settings();
        double uncompressed = heldOutAccuracy(settings, algorithm, "none");
        assertTrue(uncompressed > 0.5, "the uncompressed run learned (held-out accuracy " + uncompressed + ")");
        for (String compression : COMPRESSIONS) {
            double accuracy = heldOutAccuracy(settings, algorithm, compression);
            assertEquals(uncompressed, accuracy, 0.015, algorithm + " with " + compression + ": held-out accuracy "
                    + accuracy + " against " + uncompressed + " uncompressed");
        }
    }

    /** Rank 0's held-out accuracy after a run of 3 ranks; every rank must have finished. */
    private static double heldOutAccuracy(TrainSettings settings, String algorithm, String compression) {
        int worldSize = 3;
        Trainer trainer = new Trainer(settings, Algorithm.of(algorithm),
                new PrintStream(new ByteArrayOutputStream(), true));
        List<Transport> transports = InProcessTransport.createGroup(worldSize, TIMEOUT);
        List<Double> accuracies;
        try (RankThreads threads = new RankThreads(worldSize)) {
            accuracies = threads.run(rank -> {
                Transport transport = transports.get(rank);
                try {
                    DistributedConfig config = DistributedConfig.builder().worldSize(worldSize).rank(rank)
                            .timeout(TIMEOUT).option(AggregatorOptions.COMPRESSION_OPTION, compression).build();
                    return trainer.runWithParameters(config, transport).summary().heldOutAccuracy();
                } finally {
                    transport.close();
                }
            }, TIMEOUT.multipliedBy(2));
        }
        List<Double> all = new ArrayList<>(accuracies);
        for (double accuracy : all) {
            assertEquals(all.get(0), accuracy, 0.0, "every rank holds the same parameters");
        }
        return all.get(0);
    }
}
