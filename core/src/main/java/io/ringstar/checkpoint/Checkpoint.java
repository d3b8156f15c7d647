package io.ringstar.checkpoint;

import io.ringstar.internal.tensor.ElementType;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * One saved state of a training run: the step it was taken after, named tensors (parameters,
 * optimiser state, anything else numeric) and small string metadata (the settings a resumed run
 * must match, counters, notes). {@link CheckpointDirectory} writes and reads it.
 *
 * <h2>Ownership</h2>
 * The record keeps the maps' entries in the order given, in maps of its own that cannot be
 * changed; it keeps the tensor <em>objects</em> it is given, not copies of them. So:
 * <ul>
 *   <li>To save, build a checkpoint around the live arrays; {@link CheckpointDirectory#save}
 *       copies their values to disk during the call and keeps no reference. Do not change the
 *       arrays while {@code save} runs.</li>
 *   <li>A checkpoint that {@link CheckpointDirectory} read holds new arrays (detached, 'c' order)
 *       that belong to whoever holds the checkpoint: use them as parameters, change them, close
 *       them.</li>
 * </ul>
 *
 * <h2>Limits</h2>
 * Tensors are FLOAT or DOUBLE (the types ringstar reduces), of any shape with at most
 * {@value #MAX_RANK} dimensions, scalars and empty tensors included. Names, keys and values are
 * at most {@value #MAX_TEXT_BYTES} bytes of UTF-8; names and keys are not empty.
 *
 * @param step the number of steps taken when the state was saved; 0 or more. {@link
 *     CheckpointDirectory} orders checkpoints by it.
 * @param tensors named tensors, in the order they are written
 * @param metadata small string entries, in the order they are written
 */
public record Checkpoint(long step, Map<String, INDArray> tensors, Map<String, String> metadata) {
    /** Most dimensions of one tensor (ND4J's own limit). */
    public static final int MAX_RANK = 32;
    /** Longest name, key or value, in UTF-8 bytes. */
    public static final int MAX_TEXT_BYTES = 65_535;

    /**
     * @throws IllegalArgumentException for a negative step, a null or empty name, a null value, a
     *     tensor of another data type or more than {@value #MAX_RANK} dimensions, or a text over
     *     {@value #MAX_TEXT_BYTES} bytes; the message names the entry
     */
    public Checkpoint {
        if (step < 0) {
            throw new IllegalArgumentException("checkpoint step must be 0 or more, was " + step);
        }
        if (tensors == null || metadata == null) {
            throw new IllegalArgumentException("checkpoint tensors and metadata must not be null (use empty maps)");
        }
        Map<String, INDArray> tensorCopy = new LinkedHashMap<>();
        tensors.forEach((name, tensor) -> {
            checkText("tensor name", name, false);
            if (tensor == null) {
                throw new IllegalArgumentException("checkpoint tensor '" + name + "' is null");
            }
            if (ElementType.of(tensor.dataType()) == null) {
                throw new IllegalArgumentException("checkpoint tensor '" + name + "' is " + tensor.dataType()
                        + "; the types stored are " + Arrays.toString(ElementType.values()));
            }
            if (tensor.rank() > MAX_RANK) {
                throw new IllegalArgumentException("checkpoint tensor '" + name + "' has " + tensor.rank()
                        + " dimensions; at most " + MAX_RANK + " are stored");
            }
            tensorCopy.put(name, tensor);
        });
        Map<String, String> metadataCopy = new LinkedHashMap<>();
        metadata.forEach((key, value) -> {
            checkText("metadata key", key, false);
            if (value == null) {
                throw new IllegalArgumentException("checkpoint metadata '" + key + "' is null");
            }
            checkText("metadata value of '" + key + "'", value, true);
            metadataCopy.put(key, value);
        });
        tensors = Collections.unmodifiableMap(tensorCopy);
        metadata = Collections.unmodifiableMap(metadataCopy);
    }

    private static void checkText(String what, String text, boolean emptyAllowed) {
        if (text == null || (!emptyAllowed && text.isEmpty())) {
            throw new IllegalArgumentException("checkpoint " + what + " must not be null" + (emptyAllowed ? ""
                    : " or empty"));
        }
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_TEXT_BYTES) {
            throw new IllegalArgumentException("checkpoint " + what + " is " + bytes + " bytes of UTF-8; at most "
                    + MAX_TEXT_BYTES + " are stored");
        }
    }

    /**
     * The tensor called {@code name}.
     *
     * @throws IllegalArgumentException if there is none; the message lists the names there are
     */
    public INDArray tensor(String name) {
        INDArray tensor = tensors.get(name);
        if (tensor == null) {
            throw new IllegalArgumentException("checkpoint of step " + step + " has no tensor '" + name
                    + "'; it has " + tensors.keySet());
        }
        return tensor;
    }

    /**
     * The metadata value of {@code key}.
     *
     * @throws IllegalArgumentException if there is none; the message lists the keys there are
     */
    public String metadata(String key) {
        String value = metadata.get(key);
        if (value == null) {
            throw new IllegalArgumentException("checkpoint of step " + step + " has no metadata '" + key
                    + "'; it has " + metadata.keySet());
        }
        return value;
    }
}
