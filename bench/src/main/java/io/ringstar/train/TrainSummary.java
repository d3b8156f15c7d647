package io.ringstar.train;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;

/**
 * What one rank's training came to. Plain data; {@code lossCurve} is the rank's own array, and
 * equality of two summaries compares it by identity, as records do with arrays.
 *
 * @param steps steps taken (async: per worker; a server reports the workers' count)
 * @param finalLoss mean training loss of the last step (async worker: of its own last batch; async
 *     server: NaN, it computes no loss)
 * @param heldOutAccuracy accuracy of this rank's final parameters on the held-out samples, in [0, 1]
 *     (async server: NaN, it holds only its range of the parameters)
 * @param elapsed wall time of the training, from the first parameter exchange to the last step
 * @param communicationShare share of step time spent in the aggregator or waiting for the server, in [0, 1]
 * @param lossCurve training loss per step (sync: of the global batch, identical on every rank;
 *     async worker: its own batches, zero before the step it resumed at; async server: empty)
 * @param heldOutSize number of held-out samples
 * @param algorithm "ps" or "ring"
 * @param mode "sync" or "async"
 * @param worldSize ranks in the group
 * @param maxStepLead async: the largest number of steps a worker was ahead of the slowest worker
 *     when a server sent it parameters to go on with (a server's own count; a worker's, the
 *     largest the servers reported); -1 otherwise
 * @param maxGradientStaleness async: the most updates a server applied between the version a
 *     gradient was computed on and its own application (counted likewise); -1 otherwise
 * @param heldBackReplies async: replies a server delayed for the staleness bound (likewise); -1 otherwise
 * @param parameterDigest SHA-256 of this rank's final parameters in hex ({@link #digest}), so
 *     that two runs' results compare at a glance (async server: empty)
 * @param resumedFrom the step this run resumed from (async: the worker's own), 0 for a fresh
 *     start; {@code elapsed} and the shares cover only the steps from there on
 */
public record TrainSummary(int steps, double finalLoss, double heldOutAccuracy, Duration elapsed,
        double communicationShare, float[] lossCurve, int heldOutSize, String algorithm, String mode, int worldSize,
        long maxStepLead, long maxGradientStaleness, long heldBackReplies, String parameterDigest,
        int resumedFrom) {

    /**
     * SHA-256 of parameters given as FLOAT values per tensor ('c' order), taken over the tensors
     * in order, each value's IEEE bits little-endian: equal digests mean bit-identical parameters.
     */
    public static String digest(float[][] parameters) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
        for (float[] tensor : parameters) {
            ByteBuffer bytes = ByteBuffer.allocate(4 * tensor.length).order(ByteOrder.LITTLE_ENDIAN);
            bytes.asFloatBuffer().put(tensor);
            sha.update(bytes);
        }
        return HexFormat.of().formatHex(sha.digest());
    }


    /** The summary line that rank 0 prints at the end. */
    public String describe(String modelLabel) {
        StringBuilder text = new StringBuilder(String.format(Locale.ROOT,
                "train done: %s %s, %d rank%s, %s: %d steps%s in %.1f s, final loss %.4f, held-out accuracy %.1f%% "
                        + "(%d samples), communication %.0f%% of step time",
                algorithm, mode, worldSize, worldSize == 1 ? "" : "s", modelLabel, steps,
                resumedFrom > 0 ? " (resumed at step " + resumedFrom + ")" : "", elapsed.toMillis() / 1000.0,
                finalLoss, 100 * heldOutAccuracy, heldOutSize, 100 * communicationShare));
        if (maxStepLead >= 0) {
            text.append(String.format(Locale.ROOT,
                    "; staleness: workers at most %d steps ahead of the slowest, gradients at most %d updates old, "
                            + "%d replies held back", maxStepLead, maxGradientStaleness, heldBackReplies));
        }
        text.append("; params sha256 ").append(parameterDigest);
        return text.toString();
    }
}
