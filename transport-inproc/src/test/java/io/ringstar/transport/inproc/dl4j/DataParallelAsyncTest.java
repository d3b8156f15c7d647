package io.ringstar.transport.inproc.dl4j;

import static io.ringstar.dl4j.Dl4jFixtures.floats;
import static io.ringstar.dl4j.Dl4jFixtures.maxAbsDifference;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.AsyncSettings;
import io.ringstar.ParameterSnapshot;
import io.ringstar.SgdMomentum;
import io.ringstar.dl4j.DataParallel;
import io.ringstar.dl4j.Dl4jFixtures;
import io.ringstar.testing.Ranks;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.ViewIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.NoOp;
import org.nd4j.linalg.learning.config.Sgd;

/**
 * {@link DataParallel#attach(MultiLayerNetwork, io.ringstar.AsyncParameterServer)} on the workers of
 * an asynchronous parameter server whose rank 0 serves: one worker trains exactly as plain SGD
 * would; two end with the same final parameters; an updater other than NoOp and a server rank are
 * refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DataParallelAsyncTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final float LEARNING_RATE = 0.1f;
    private static final int BATCH = 8;
    private static final int STEPS = 5;
    private static final long[] SHAPE = Dl4jFixtures.mlp(1, new NoOp()).params().shape();

    private static AsyncSettings plainSgd() {
        return AsyncSettings.builder(SgdMomentum.plain(LEARNING_RATE)).maxStaleness(0).build();
    }

    /**
     * With one worker the server applies each of its gradients in turn, p - lr * g: the steps of DL4J's
     * own Sgd on the same batches. The server's arithmetic is its own (float, the same operations),
     * so the two agree to rounding.
     */
    @Test
    void oneWorkerTrainsAsPlainSgd() {
        DataSet data = Dl4jFixtures.data(BATCH * STEPS, Dl4jFixtures.MLP_INPUTS, 9);
        List<float[]> finals = values(Dl4jRanks.runAsync(2, plainSgd(), SHAPE, TIMEOUT, (rank, server) -> {
            MultiLayerNetwork net = Dl4jFixtures.mlp(5, new NoOp());
            if (server.isServer()) {
                server.serve(net.params());
                return null;
            }
            DataParallel.attach(net, server);
            net.fit(new ViewIterator(data, BATCH));
            ParameterSnapshot last = DataParallel.finish(net, server);
            assertArrayEquals(floats(last.parameters()[0]), floats(net.params()));
            assertTrue(net.getListeners().isEmpty(), "finish detaches");
            return floats(net.params());
        }));
        MultiLayerNetwork reference = Dl4jFixtures.mlp(5, new Sgd(LEARNING_RATE));
        reference.fit(new ViewIterator(data, BATCH));
        double difference = maxAbsDifference(Nd4j.createFromArray(finals.get(1)), reference.params());
        assertTrue(difference <= 1e-6, "differs from plain SGD by " + difference);
        float[] initial = floats(Dl4jFixtures.mlp(5, new NoOp()).params());
        assertFalse(Arrays.equals(initial, finals.get(1)), "the worker trained");
    }

    @Test
    void twoWorkersEndWithTheSameParameters() {
        List<float[]> finals = values(Dl4jRanks.runAsync(3, plainSgd(), SHAPE, TIMEOUT, (rank, server) -> {
            MultiLayerNetwork net = Dl4jFixtures.mlp(10 + rank, new NoOp());
            if (server.isServer()) {
                server.serve(net.params());
                return null;
            }
            DataParallel.attach(net, server);
            net.fit(new ViewIterator(Dl4jFixtures.data(BATCH * STEPS, Dl4jFixtures.MLP_INPUTS, rank), BATCH));
            ParameterSnapshot last = DataParallel.finish(net, server);
            // Every step of both workers reached the server: one update per push.
            assertEquals(2L * STEPS, last.version(), "updates the server applied");
            return floats(net.params());
        }));
        assertNull(finals.get(0));
        assertArrayEquals(finals.get(1), finals.get(2));
        float[] initial = floats(Dl4jFixtures.mlp(10, new NoOp()).params());
        assertFalse(Arrays.equals(initial, finals.get(1)), "the server's parameters moved");
    }

    @Test
    void refusesAStatefulUpdaterOnAWorkerAndAnyAttachOnAServer() {
        List<Ranks.Outcome<Object>> outcomes = Dl4jRanks.runAsync(2, plainSgd(), SHAPE, TIMEOUT, (rank, server) -> {
            DataParallel.attach(Dl4jFixtures.mlp(5, server.isServer() ? new NoOp() : new Adam(0.01)), server);
            return null;
        });
        IllegalArgumentException server = assertInstanceOf(IllegalArgumentException.class, outcomes.get(0).error);
        assertTrue(server.getMessage().contains("server.serve"), server.getMessage());
        IllegalArgumentException worker = assertInstanceOf(IllegalArgumentException.class, outcomes.get(1).error);
        assertTrue(worker.getMessage().contains("NoOp") && worker.getMessage().contains("Adam"), worker.getMessage());
    }

    /** Every rank's value, or an AssertionError naming every failure, the last rank's first (a worker's). */
    private static List<float[]> values(List<Ranks.Outcome<float[]>> outcomes) {
        AssertionError failed = null;
        for (int rank = outcomes.size() - 1; rank >= 0; rank--) {
            Ranks.Outcome<float[]> outcome = outcomes.get(rank);
            if (outcome.error != null) {
                AssertionError error = new AssertionError("rank " + rank + " failed: " + outcome.error, outcome.error);
                if (failed == null) {
                    failed = error;
                } else {
                    failed.addSuppressed(error);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
        return outcomes.stream().map(outcome -> outcome.value).toList();
    }
}
