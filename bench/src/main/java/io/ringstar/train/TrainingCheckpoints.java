package io.ringstar.train;

import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.checkpoint.CheckpointDirectory;
import io.ringstar.ranks.Algorithm;
import io.ringstar.train.model.Network;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One algorithm's checkpoints of one {@code train} run, in {@code DIR/<algorithm>}: what a
 * checkpoint records about the run, the check that a resumed run is the same run, saving, and the
 * checkpoint to resume from. Used by rank 0 alone, which prints the notices and warnings.
 *
 * <p>A checkpoint's metadata records every setting that decides the trajectory (the algorithm,
 * mode, model, data, seed, held-out split, global batch, learning rate and world size) and a
 * resume refuses any difference, naming it. {@code --steps} may differ: a run can be extended.
 * The optimiser is plain SGD, whose only state is the step counter; the loss curve so far is
 * kept too, so a resumed run's summary covers the whole run.
 *
 * <p>Thread-safe: rank threads of one JVM share the instance (only rank 0 calls it, but the
 * command may have loaded the resume point from its main thread first).
 */
final class TrainingCheckpoints {
    /** Tensor of the training loss per step so far, FLOAT [steps done]. */
    static final String LOSS_CURVE = "loss-curve";
    private static final String FORMAT = "ringstar train checkpoint 1";

    private final CheckpointSettings settings;
    private final TrainSettings train;
    private final Algorithm algorithm;
    private final PrintStream out;
    private final CheckpointDirectory directory;
    /** The resume point checked ahead of connecting, waiting for rank 0 to take it; null when not loaded. */
    private Optional<Checkpoint> preloaded;

    TrainingCheckpoints(CheckpointSettings settings, TrainSettings train, Algorithm algorithm, PrintStream out) {
        this.settings = settings;
        this.train = train;
        this.algorithm = algorithm;
        this.out = out;
        this.directory = settings.enabled() ? new CheckpointDirectory(settings.directory().resolve(algorithm.label()),
                CheckpointDirectory.DEFAULT_KEEP, line -> out.println("warning: " + line)) : null;
    }

    boolean due(int done) {
        return settings.due(done, train.steps());
    }

    /** What a checkpoint of this run records about it; a resume must find the same. */
    Map<String, String> identity(int worldSize) {
        Map<String, String> identity = new LinkedHashMap<>();
        identity.put("format", FORMAT);
        identity.put("algorithm", algorithm.label());
        identity.put("mode", train.mode().label());
        identity.put("model", train.model().label());
        identity.put("hidden", Integer.toString(train.hidden()));
        identity.put("data", train.describeData());
        identity.put("seed", Long.toString(train.seed()));
        identity.put("eval-size", Integer.toString(train.evalSize()));
        identity.put("batch-size", Integer.toString(train.batchSize()));
        identity.put("lr", Double.toString(train.learningRate()));
        identity.put("world-size", Integer.toString(worldSize));
        return identity;
    }

    /**
     * Saves the state after {@code step} steps: the named tensors (borrowed, read during the call)
     * plus this run's identity and {@code extra} metadata. Blocks for the disk I/O.
     *
     * @throws UncheckedIOException naming the file if it cannot be written: a run asked to
     *     checkpoint does not go on without
     */
    void save(long step, Map<String, INDArray> tensors, Map<String, String> extra, int worldSize) {
        Map<String, String> metadata = identity(worldSize);
        metadata.put("steps", Integer.toString(train.steps()));
        metadata.putAll(extra);
        try {
            directory.save(new Checkpoint(step, tensors, metadata));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Loads and checks the resume point now, before any connection, so that a mismatching one
     * stops the program at once; {@link #takeResumePoint} then hands it over. Does nothing without
     * {@code --resume}.
     *
     * @throws IllegalArgumentException if the checkpoint is not of this run, naming the difference
     */
    synchronized void checkResume(int worldSize, Network network) {
        if (settings.resume() && train.mode() == TrainSettings.Mode.ASYNC) {
            checkServerCheckpoint(worldSize);
        } else if (settings.resume() && preloaded == null) {
            preloaded = load(worldSize, network);
        }
    }

    /**
     * The checkpoint to continue from (its tensors are the caller's), or empty: without
     * {@code --resume}, or with no valid checkpoint, which is then said.
     *
     * @throws IllegalArgumentException if the checkpoint is not of this run, naming the difference
     */
    synchronized Optional<Checkpoint> takeResumePoint(int worldSize, Network network) {
        if (!settings.resume()) {
            return Optional.empty();
        }
        Optional<Checkpoint> point = preloaded != null ? preloaded : load(worldSize, network);
        // Handed over once: the tensors become the run's parameters, so a second run loads afresh.
        preloaded = null;
        if (point.isPresent()) {
            out.printf("train: resuming %s from step %d (%s)%n", algorithm.label(), point.get().step(),
                    directory.pathOf(point.get().step()));
        } else {
            out.printf("train: --resume: no valid checkpoint in %s; starting %s from step 0%n",
                    directory.directory(), algorithm.label());
        }
        return point;
    }

    /**
     * Async mode: the servers checkpoint in {@code DIR/ps/server-<s>} through the library, which
     * checks each on resume; server 0's newest is checked here too, so that a checkpoint of another
     * run stops the program before it connects.
     */
    private void checkServerCheckpoint(int worldSize) {
        CheckpointDirectory server0 = new CheckpointDirectory(directory.directory().resolve("server-0"));
        Optional<Checkpoint> point;
        try {
            point = server0.loadLatest();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        point.ifPresent(checkpoint -> {
            try {
                String file = server0.pathOf(checkpoint.step()).toString();
                for (Map.Entry<String, String> expected : identity(worldSize).entrySet()) {
                    String saved = checkpoint.metadata().get(expected.getKey());
                    if (!expected.getValue().equals(saved)) {
                        throw new IllegalArgumentException("cannot resume from " + file + ": it was saved with "
                                + expected.getKey() + " " + (saved == null ? "(not recorded)" : saved) + ", this run "
                                + "has " + expected.getValue() + "; resume with the settings it was saved with, or "
                                + "give another --checkpoint-dir to start afresh");
                    }
                }
            } finally {
                checkpoint.tensors().values().forEach(INDArray::close);
            }
        });
    }

    private Optional<Checkpoint> load(int worldSize, Network network) {
        Optional<Checkpoint> point;
        try {
            point = directory.loadLatest();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        point.ifPresent(checkpoint -> check(checkpoint, worldSize, network));
        return point;
    }

    private void check(Checkpoint checkpoint, int worldSize, Network network) {
        String file = directory.pathOf(checkpoint.step()).toString();
        for (Map.Entry<String, String> expected : identity(worldSize).entrySet()) {
            String saved = checkpoint.metadata().get(expected.getKey());
            if (!expected.getValue().equals(saved)) {
                throw new IllegalArgumentException("cannot resume from " + file + ": it was saved with "
                        + expected.getKey() + " " + (saved == null ? "(not recorded)" : saved) + ", this run has "
                        + expected.getValue() + "; resume with the settings it was saved with, or give another "
                        + "--checkpoint-dir to start afresh");
            }
        }
        if (checkpoint.step() > train.steps()) {
            throw new IllegalArgumentException("cannot resume from " + file + ": it is at step " + checkpoint.step()
                    + ", past --steps " + train.steps());
        }
        INDArray curve = checkpoint.tensors().get(LOSS_CURVE);
        if (curve == null || curve.length() != checkpoint.step()) {
            throw new IllegalArgumentException("cannot resume from " + file + ": its " + LOSS_CURVE + " has "
                    + (curve == null ? "no" : curve.length()) + " entries for " + checkpoint.step() + " steps");
        }
        long[][] shapes = network.shapes();
        String[] names = network.parameterNames();
        for (int i = 0; i < shapes.length; i++) {
            INDArray tensor = checkpoint.tensors().get(names[i]);
            if (tensor == null || !Arrays.equals(shapes[i], tensor.shape())) {
                throw new IllegalArgumentException("cannot resume from " + file + ": parameter " + names[i]
                        + (tensor == null ? " is missing" : " has shape " + Arrays.toString(tensor.shape()))
                        + "; the model needs shape " + Arrays.toString(shapes[i]));
            }
        }
    }
}
