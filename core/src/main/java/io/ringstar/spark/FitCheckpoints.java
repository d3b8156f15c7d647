package io.ringstar.spark;

import io.ringstar.InvalidConfigException;
import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.checkpoint.CheckpointDirectory;
import io.ringstar.internal.tensor.TensorMemory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The checkpoints of one {@link SparkDataParallel#fit}, in its option {@value FitSettings#CHECKPOINT_DIR}:
 * rank 0 saves the parameters, the updater state and the counters after every
 * {@value FitSettings#CHECKPOINT_EVERY} steps and after the last ({@link CheckpointDirectory}
 * keeps the newest {@value CheckpointDirectory#DEFAULT_KEEP}), and reads the newest back to resume.
 *
 * <p>A checkpoint's step counts the global steps of this fit from its start, epochs included
 * ({@code epoch * stepsPerEpoch + k}). Its metadata records the fit's id (drawn once per call on
 * the driver), the ranks, the steps of an epoch and the minibatch size. A retried stage resumes
 * only from a checkpoint of its own fit, so an older run's files in the same folder are never taken
 * for this one's (before this fit's first save, the newest is an older run's, and the retry starts
 * at step 0; the first save deletes the older run's checkpoints of later steps). Option
 * {@value FitSettings#RESUME} resumes a new fit from any checkpoint of the same shape: a run whose
 * driver was lost, started again. Either way a checkpoint of another number of ranks, steps or
 * minibatch size, or of another parameter count, is refused with a message naming the difference:
 * the data or the network are not the ones it was saved with.
 *
 * <p>Used by rank 0 alone, on its task's thread; blocks for the disk I/O.
 */
final class FitCheckpoints {
    static final String FORMAT = "ringstar SparkDataParallel checkpoint 1";
    static final String PARAMS = "params";
    static final String UPDATER_STATE = "updater-state";
    private static final System.Logger LOG = System.getLogger(SparkDataParallel.class.getName());

    private final CheckpointDirectory directory;
    private final int every;
    private final String fitId;

    FitCheckpoints(FitSettings settings, String fitId) {
        this.directory = new CheckpointDirectory(Path.of(settings.checkpointDir()), CheckpointDirectory.DEFAULT_KEEP,
                line -> LOG.log(System.Logger.Level.WARNING, line));
        this.every = settings.checkpointEvery();
        this.fitId = fitId;
    }

    Path directory() {
        return directory.directory();
    }

    /** Whether a checkpoint is due once {@code done} of {@code total} steps are done. */
    boolean due(long done, long total) {
        return done % every == 0 || done == total;
    }

    /**
     * Saves the state of {@code network} after {@code step} global steps. Reads the arrays during the
     * call and keeps no reference.
     *
     * @throws IOException naming the file if it cannot be written: a fit asked to checkpoint does not
     *     go on without
     */
    void save(long step, SparkNetwork network, MinibatchPlan plan) throws IOException {
        Map<String, INDArray> tensors = new LinkedHashMap<>();
        tensors.put(PARAMS, network.params());
        INDArray state = network.updaterState();
        if (state != null) {
            tensors.put(UPDATER_STATE, state);
        }
        Map<String, String> metadata = shape(plan, network.params().length());
        metadata.put("format", FORMAT);
        metadata.put("fit-id", fitId);
        metadata.put("iteration-count", Integer.toString(network.iterationCount()));
        metadata.put("epoch-count", Integer.toString(network.epochCount()));
        directory.save(new Checkpoint(step, tensors, metadata));
    }

    /** What a checkpoint must share with the fit that resumes from it. */
    private static Map<String, String> shape(MinibatchPlan plan, long parameters) {
        Map<String, String> shape = new LinkedHashMap<>();
        shape.put("ranks", Integer.toString(plan.ranks()));
        shape.put("steps-per-epoch", Integer.toString(plan.steps()));
        shape.put("minibatch-size", Integer.toString(plan.minibatchSize()));
        shape.put("parameters", Long.toString(parameters));
        return shape;
    }

    /**
     * The checkpoint to resume from, or empty to start at step 0 (said in the log, with why). With
     * {@code ownFitOnly} (a retried stage) only a checkpoint of this fit counts.
     *
     * @param total the global steps of the whole fit; a checkpoint past them is refused
     * @throws InvalidConfigException if the checkpoint does not fit this run, naming the difference
     * @throws IOException if the folder cannot be listed
     */
    Optional<Checkpoint> resumePoint(boolean ownFitOnly, MinibatchPlan plan, long parameters, long total)
            throws IOException {
        Optional<Checkpoint> newest = directory.loadLatest();
        if (newest.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, () -> "SparkDataParallel: no checkpoint in " + directory.directory()
                    + "; starting from step 0");
            return newest;
        }
        Checkpoint checkpoint = newest.get();
        String file = directory.pathOf(checkpoint.step()).toString();
        boolean taken = false;
        try {
            if (!FORMAT.equals(checkpoint.metadata().get("format"))) {
                throw new InvalidConfigException("option " + FitSettings.CHECKPOINT_DIR, directory.directory(),
                        "its newest checkpoint " + file + " is not one of SparkDataParallel.fit (format "
                        + checkpoint.metadata().get("format") + "); give fit a folder of its own");
            }
            if (ownFitOnly && !fitId.equals(checkpoint.metadata().get("fit-id"))) {
                LOG.log(System.Logger.Level.INFO, () -> "SparkDataParallel: the newest checkpoint, " + file
                        + ", is another fit's; this one saved none yet, so it starts again from step 0");
                return Optional.empty();
            }
            Map<String, String> expected = shape(plan, parameters);
            for (Map.Entry<String, String> entry : expected.entrySet()) {
                String saved = checkpoint.metadata().get(entry.getKey());
                if (!entry.getValue().equals(saved)) {
                    throw new InvalidConfigException("option " + FitSettings.CHECKPOINT_DIR, directory.directory(),
                            "cannot resume from " + file + ": it was saved with " + entry.getKey() + " " + saved
                            + ", this fit has " + entry.getValue() + " (the data or the network differ from the"
                            + " run that saved it; an RDD must give the same partitions when Spark computes it again)");
                }
            }
            if (checkpoint.step() > total) {
                throw new InvalidConfigException("option " + FitSettings.CHECKPOINT_DIR, directory.directory(),
                        "cannot resume from " + file + ": it is at step " + checkpoint.step() + ", past the "
                        + total + " steps of this fit");
            }
            checkpoint.tensor(PARAMS);
            checkpoint.metadata("iteration-count");
            checkpoint.metadata("epoch-count");
            taken = true;
            return newest;
        } finally {
            if (!taken) {
                checkpoint.tensors().values().forEach(TensorMemory::close);
            }
        }
    }

    /** Makes {@code network}'s state that of {@code checkpoint}, in place, and frees the checkpoint's arrays. */
    static void install(Checkpoint checkpoint, SparkNetwork network) {
        try {
            network.params().assign(checkpoint.tensor(PARAMS));
            INDArray state = network.updaterState();
            INDArray saved = checkpoint.tensors().get(UPDATER_STATE);
            if ((state == null) != (saved == null) || (state != null && state.length() != saved.length())) {
                throw new IllegalStateException("the checkpoint of step " + checkpoint.step() + " holds an updater"
                        + " state of " + (saved == null ? "no" : saved.length()) + " elements; the network's has "
                        + (state == null ? "none" : state.length()));
            }
            if (state != null) {
                state.assign(saved);
            }
            network.setIterationCount(Integer.parseInt(checkpoint.metadata("iteration-count")));
            network.setEpochCount(Integer.parseInt(checkpoint.metadata("epoch-count")));
        } finally {
            checkpoint.tensors().values().forEach(TensorMemory::close);
        }
    }
}
