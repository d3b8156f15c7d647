package io.ringstar.transport.inproc.dl4j;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.dl4j.DataParallel;
import io.ringstar.dl4j.Dl4jFixtures;
import io.ringstar.testing.Ranks;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.dataset.ViewIterator;
import org.nd4j.linalg.learning.config.Sgd;

/**
 * Ranks that disagree on the batch size or on the number of steps all end with a {@link
 * CollectiveException} naming the step, at that step, long before the aggregators' timeout: never
 * a hang, never a silent average of unlike things.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataParallelMismatchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    /** Well within the timeout: the mismatch is caught by the step's own call, not by a wait running out. */
    private static final Duration PROMPTLY = Duration.ofSeconds(5);
    private static final int WORLD = 3;

    /** Rank 1 trains on batches of 5 examples, the others on batches of 4: step 0 fails everywhere. */
    @ParameterizedTest
    @EnumSource(Dl4jRanks.Algorithm.class)
    void differentBatchSizesFailEveryRankAtThatStep(Dl4jRanks.Algorithm algorithm) {
        List<Ranks.Outcome<Object>> outcomes = Dl4jRanks.run(WORLD, algorithm, TIMEOUT, (rank, aggregator) -> {
            int batch = rank == 1 ? 5 : 4;
            MultiLayerNetwork net = Dl4jFixtures.mlp(1, new Sgd(0.1));
            DataParallel.attach(net, aggregator);
            net.fit(new ViewIterator(Dl4jFixtures.data(3 * batch, Dl4jFixtures.MLP_INPUTS, rank), batch));
            return null;
        });
        assertEveryRankFailedNaming(outcomes, "DataParallel step 0 (epoch 0)");
    }

    /** The marker catches a different batch size whatever the gradients' compression and the star's sharding. */
    @ParameterizedTest(name = "{0}, {1} = {2}")
    @CsvSource({"STAR, compression, fp16", "RING, compression, topk:0.5", "STAR, servers, 2"})
    void differentBatchSizesFailEveryRankWhateverTheOptions(Dl4jRanks.Algorithm algorithm, String option,
            String value) {
        List<Ranks.Outcome<Object>> outcomes = Dl4jRanks.run(WORLD, algorithm, TIMEOUT, Map.of(option, value),
                (rank, aggregator) -> {
                    int batch = rank == 0 ? 3 : 4;
                    MultiLayerNetwork net = Dl4jFixtures.mlp(1, new Sgd(0.1));
                    DataParallel.attach(net, aggregator);
                    net.fit(new ViewIterator(Dl4jFixtures.data(2 * batch, Dl4jFixtures.MLP_INPUTS, rank), batch));
                    return null;
                });
        assertEveryRankFailedNaming(outcomes, "DataParallel step 0 (epoch 0)");
    }

    /**
     * Rank 2 has 4 batches, the others 3: ranks 0 and 1 end their epoch while rank 2 starts step 3,
     * and all three fail there.
     */
    @ParameterizedTest
    @EnumSource(Dl4jRanks.Algorithm.class)
    void oneMoreStepOnOneRankFailsEveryRankWhereTheOthersEndTheirEpoch(Dl4jRanks.Algorithm algorithm) {
        List<Ranks.Outcome<Object>> outcomes = Dl4jRanks.run(WORLD, algorithm, TIMEOUT, (rank, aggregator) -> {
            int batches = rank == 2 ? 4 : 3;
            MultiLayerNetwork net = Dl4jFixtures.mlp(1, new Sgd(0.1));
            DataParallel.attach(net, aggregator);
            net.fit(new ViewIterator(Dl4jFixtures.data(4 * batches, Dl4jFixtures.MLP_INPUTS, rank), 4));
            return null;
        });
        assertEveryRankFailedNaming(outcomes, "step 3");
        assertTrue(outcomes.get(0).error.getMessage().contains("DataParallel end of epoch 0 at step 3"),
                outcomes.get(0).error.getMessage());
        assertTrue(outcomes.get(2).error.getMessage().contains("DataParallel step 3 (epoch 0)"),
                outcomes.get(2).error.getMessage());
    }

    /** Every rank failed promptly with a CollectiveException whose message names {@code step}; one saw the mismatch. */
    private static void assertEveryRankFailedNaming(List<Ranks.Outcome<Object>> outcomes, String step) {
        boolean mismatchSeen = false;
        for (Ranks.Outcome<Object> outcome : outcomes) {
            assertNotNull(outcome.error, "rank " + outcome.rank + " did not fail");
            CollectiveException failure = assertInstanceOf(CollectiveException.class, outcome.error,
                    "rank " + outcome.rank + "'s failure");
            assertTrue(failure.getMessage().contains(step), "rank " + outcome.rank + ": " + failure.getMessage());
            assertTrue(failure.getMessage().contains("same batch size and the same number of steps"),
                    failure.getMessage());
            assertTrue(outcome.elapsed.compareTo(PROMPTLY) < 0, "rank " + outcome.rank + " took " + outcome.elapsed);
            mismatchSeen |= failure instanceof CollectiveMismatchException;
        }
        assertTrue(mismatchSeen, "no rank reported a mismatch");
    }
}
