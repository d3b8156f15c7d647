package io.ringstar.spark;

import static io.ringstar.dl4j.Dl4jFixtures.floats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.InvalidConfigException;
import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.dl4j.Dl4jFixtures;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.learning.config.Adam;

/**
 * What a rank 0 of {@link SparkDataParallel#fit} resumes from, without Spark: a retried stage takes
 * only its own fit's checkpoint (an older run's in the same folder is not this one's), option
 * {@code resume} takes any of the same shape, and a checkpoint of another shape is refused naming
 * the difference. The stage retry itself needs executors that can be lost: the multi-JVM test's.
 */
@Timeout(60)
class FitCheckpointsTest {
    /** 3 ranks, 5 steps of 4 examples each. */
    private static MinibatchPlan plan(int steps) {
        long[][] first = {{steps, 4, 4L * steps}, {steps, 4, 4L * steps}, {steps, 4, 4L * steps}};
        return MinibatchPlan.of(first, new long[] {steps, steps, steps}, 4);
    }

    private static FitSettings settings(Path directory, boolean resume) {
        return FitSettings.of(Map.of("checkpointDir", directory.toString(), "resume", Boolean.toString(resume)));
    }

    @Test
    void aRetriedStageResumesOnlyFromItsOwnFitsCheckpoint(@TempDir Path directory) throws Exception {
        MultiLayerNetwork net = Dl4jFixtures.mlp(1, new Adam(0.01));
        net.fit(Dl4jFixtures.data(4, Dl4jFixtures.MLP_INPUTS, 3));
        SparkNetwork network = SparkNetwork.of(net);
        long parameters = net.params().length();
        new FitCheckpoints(settings(directory, false), "older-fit").save(4, network, plan(5));

        FitCheckpoints thisFit = new FitCheckpoints(settings(directory, false), "this-fit");
        assertEquals(Optional.empty(), thisFit.resumePoint(true, plan(5), parameters, 10),
                "an older run's checkpoint is not this fit's");
        Optional<Checkpoint> anyFit = thisFit.resumePoint(false, plan(5), parameters, 10);
        assertEquals(4, anyFit.orElseThrow().step(), "option resume takes it");

        MultiLayerNetwork other = Dl4jFixtures.mlp(2, new Adam(0.01));
        SparkNetwork resumed = SparkNetwork.of(other);
        FitCheckpoints.install(anyFit.get(), resumed);
        assertArrayEquals(floats(net.params()), floats(other.params()));
        assertArrayEquals(floats(net.getUpdater().getStateViewArray()), floats(other.getUpdater().getStateViewArray()));
        assertEquals(1, other.getIterationCount());

        thisFit.save(6, network, plan(5));
        assertEquals(6, thisFit.resumePoint(true, plan(5), parameters, 10).orElseThrow().step(),
                "once this fit saved, a retry takes its checkpoint");
    }

    @Test
    void aCheckpointOfAnotherShapeIsRefusedNamingTheDifference(@TempDir Path directory) throws Exception {
        MultiLayerNetwork net = Dl4jFixtures.mlp(1, new Adam(0.01));
        FitCheckpoints checkpoints = new FitCheckpoints(settings(directory, true), "fit");
        checkpoints.save(4, SparkNetwork.of(net), plan(5));

        InvalidConfigException steps = assertThrows(InvalidConfigException.class,
                () -> checkpoints.resumePoint(false, plan(6), net.params().length(), 12));
        assertTrue(steps.getMessage().contains("steps-per-epoch 5, this fit has 6"), steps.getMessage());
        InvalidConfigException past = assertThrows(InvalidConfigException.class,
                () -> checkpoints.resumePoint(false, plan(5), net.params().length(), 3));
        assertTrue(past.getMessage().contains("past the 3 steps"), past.getMessage());
    }
}
