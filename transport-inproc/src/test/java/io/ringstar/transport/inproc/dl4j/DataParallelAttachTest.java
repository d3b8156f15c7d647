package io.ringstar.transport.inproc.dl4j;

import static io.ringstar.dl4j.Dl4jFixtures.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.ringstar.dl4j.DataParallel;
import io.ringstar.dl4j.Dl4jFixtures;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.ViewIterator;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.learning.config.Adam;

/**
 * Attaching makes every rank's network rank 0's: ranks start from different seeds and train
 * different numbers of steps on their own data first (so their parameters, Adam's moments and
 * their step counters all differ), and after {@link DataParallel#attach} each holds exactly what
 * rank 0 held; for a {@link ComputationGraph} too, which then trains on in step.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataParallelAttachTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final int BATCH = 8;

    /** A network's parameters, updater state and counters. */
    record State(float[] params, float[] updaterState, int iterations, int epochs) {
        static State of(MultiLayerNetwork net) {
            return new State(floats(net.params()), floats(net.getUpdater().getStateViewArray()),
                    net.getIterationCount(), net.getEpochCount());
        }

        static State of(ComputationGraph net) {
            return new State(floats(net.params()), floats(net.getUpdater().getStateViewArray()),
                    net.getIterationCount(), net.getEpochCount());
        }
    }

    /** Rank {@code rank}'s own data: {@code rank + 1} batches. */
    private static DataSetIterator ownBatches(int rank) {
        return new ViewIterator(Dl4jFixtures.data(BATCH * (rank + 1), Dl4jFixtures.MLP_INPUTS, 300 + rank), BATCH);
    }

    @ParameterizedTest
    @EnumSource(Dl4jRanks.Algorithm.class)
    void everyRankTakesRankZerosParametersUpdaterStateAndCounters(Dl4jRanks.Algorithm algorithm) {
        List<State[]> states = Dl4jRanks.runAll(3, algorithm, TIMEOUT, (rank, aggregator) -> {
            MultiLayerNetwork net = Dl4jFixtures.mlp(200 + rank, new Adam(0.01));
            // rank + 1 epochs: the epoch counters differ too, so their broadcast is checked.
            net.fit(ownBatches(rank), rank + 1);
            State before = State.of(net);
            DataParallel.attach(net, aggregator);
            return new State[] {before, State.of(net)};
        });
        assertDifferentBeforeEqualAfter(states);
    }

    @Test
    void aComputationGraphTakesRankZerosStateAndTrainsInStep() {
        DataSet shared = Dl4jFixtures.data(2 * BATCH * 3, Dl4jFixtures.MLP_INPUTS, 17);
        List<State[]> states = Dl4jRanks.runAll(2, Dl4jRanks.Algorithm.RING, TIMEOUT, (rank, aggregator) -> {
            ComputationGraph net = Dl4jFixtures.mlpGraph(200 + rank, new Adam(0.01));
            net.fit(ownBatches(rank), rank + 1);
            State before = State.of(net);
            DataParallel.attach(net, aggregator);
            State attached = State.of(net);
            net.fit(DataParallel.shard(new ViewIterator(shared, 2 * BATCH), rank, 2));
            return new State[] {before, attached, State.of(net)};
        });
        assertDifferentBeforeEqualAfter(states);
        State trained = states.get(0)[2];
        assertEquals(states.get(0)[0].iterations() + 3, trained.iterations());
        assertFalse(Arrays.equals(states.get(0)[1].params(), trained.params()), "the graph trained");
        assertArrayEquals(trained.params(), states.get(1)[2].params(), "rank 1's parameters after training");
        assertArrayEquals(trained.updaterState(), states.get(1)[2].updaterState(), "rank 1's updater state");
    }

    /** Before attach the ranks' states differ from rank 0's; after, each equals rank 0's before. */
    private static void assertDifferentBeforeEqualAfter(List<State[]> states) {
        State rankZero = states.get(0)[0];
        for (int rank = 0; rank < states.size(); rank++) {
            State before = states.get(rank)[0];
            State after = states.get(rank)[1];
            if (rank > 0) {
                assertFalse(Arrays.equals(rankZero.params(), before.params()), "rank " + rank + " started alike");
                assertFalse(Arrays.equals(rankZero.updaterState(), before.updaterState()),
                        "rank " + rank + "'s updater started alike");
                assertFalse(rankZero.iterations() == before.iterations(), "rank " + rank + " counted alike");
                assertFalse(rankZero.epochs() == before.epochs(), "rank " + rank + " counted its epochs alike");
            }
            assertArrayEquals(rankZero.params(), after.params(), "rank " + rank + "'s parameters");
            assertArrayEquals(rankZero.updaterState(), after.updaterState(), "rank " + rank + "'s updater state");
            assertEquals(rankZero.iterations(), after.iterations(), "rank " + rank + "'s step count");
            assertEquals(rankZero.epochs(), after.epochs(), "rank " + rank + "'s epoch count");
        }
    }
}
