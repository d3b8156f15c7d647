package io.ringstar.internal.async;

import io.ringstar.checkpoint.Checkpoint;
import io.ringstar.checkpoint.CheckpointDirectory;
import io.ringstar.internal.tensor.TensorMemory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * One server's checkpoints, in {@code <root>/server-<s>} through {@link CheckpointDirectory}: the
 * checkpoint's step is the server's version; tensors {@value #PARAMETERS} (its range, FLOAT),
 * {@value #STATE}{@code <i>} (the optimizer's state arrays, FLOAT) and {@value #CLOCKS} (each
 * worker's clock, DOUBLE); metadata the identity (servers, this server, workers, parameter
 * elements, range, optimizer, the caller's entries), which a resume requires equal.
 */
public final class ShardCheckpoints {
    static final String PARAMETERS = "parameters";
    static final String STATE = "optimizer-state-";
    static final String CLOCKS = "worker-clocks";

    private final CheckpointDirectory directory;
    private final Map<String, String> identity;
    private final int stateArrays;
    private final int workers;

    /** What a server restores. */
    record State(long version, float[] parameters, float[][] optimizerState, long[] clocks) {
    }

    ShardCheckpoints(Path root, int server, Map<String, String> identity, int stateArrays, int workers) {
        this.directory = new CheckpointDirectory(root.resolve("server-" + server));
        this.identity = new LinkedHashMap<>(identity);
        this.stateArrays = stateArrays;
        this.workers = workers;
    }

    /** Where this server's checkpoints go. */
    Path directory() {
        return directory.directory();
    }

    /** The newest valid checkpoint's state, or empty if there is none. */
    Optional<State> load(int length) {
        Optional<Checkpoint> latest;
        try {
            latest = directory.loadLatest();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (latest.isEmpty()) {
            return Optional.empty();
        }
        Checkpoint checkpoint = latest.get();
        Path file = directory.pathOf(checkpoint.step());
        try {
            for (Map.Entry<String, String> expected : identity.entrySet()) {
                String saved = checkpoint.metadata().get(expected.getKey());
                if (!expected.getValue().equals(saved)) {
                    throw new IllegalArgumentException("cannot resume from " + file + ": it was saved with "
                            + expected.getKey() + " " + saved + ", this run has " + expected.getValue());
                }
            }
            float[] parameters = floats(checkpoint, PARAMETERS, length, file);
            float[][] state = new float[stateArrays][];
            for (int i = 0; i < stateArrays; i++) {
                state[i] = floats(checkpoint, STATE + i, length, file);
            }
            INDArray clockArray = checkpoint.tensor(CLOCKS);
            if (clockArray.length() != workers) {
                throw new IllegalArgumentException("cannot resume from " + file + ": " + clockArray.length()
                        + " worker clocks for " + workers + " workers");
            }
            long[] clocks = new long[workers];
            for (int w = 0; w < workers; w++) {
                clocks[w] = (long) clockArray.getDouble(w);
            }
            return Optional.of(new State(checkpoint.step(), parameters, state, clocks));
        } finally {
            checkpoint.tensors().values().forEach(TensorMemory::close);
        }
    }

    private static float[] floats(Checkpoint checkpoint, String name, int length, Path file) {
        INDArray tensor = checkpoint.tensor(name);
        if (tensor.length() != length) {
            throw new IllegalArgumentException("cannot resume from " + file + ": " + name + " has " + tensor.length()
                    + " elements, the server's range " + length);
        }
        return tensor.castTo(DataType.FLOAT).data().asFloat();
    }

    /**
     * Saves the state; blocks for the disk I/O.
     *
     * @throws UncheckedIOException if it cannot be written
     */
    void save(long version, float[] parameters, float[][] optimizerState, long[] clocks) {
        Map<String, INDArray> tensors = new LinkedHashMap<>();
        tensors.put(PARAMETERS, Nd4j.create(parameters, new long[] {parameters.length}, 'c'));
        for (int i = 0; i < optimizerState.length; i++) {
            tensors.put(STATE + i, Nd4j.create(optimizerState[i], new long[] {optimizerState[i].length}, 'c'));
        }
        double[] clockValues = new double[clocks.length];
        for (int w = 0; w < clocks.length; w++) {
            clockValues[w] = clocks[w];
        }
        tensors.put(CLOCKS, Nd4j.create(clockValues, new long[] {clocks.length}, DataType.DOUBLE));
        try {
            directory.save(new Checkpoint(version, tensors, identity));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            tensors.values().forEach(TensorMemory::close);
        }
    }
}
