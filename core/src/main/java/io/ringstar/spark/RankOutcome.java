package io.ringstar.spark;

import io.ringstar.internal.tensor.TensorMemory;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * What one rank of a {@link SparkDataParallel#fit} sends back to the driver: its plan and counts,
 * its losses and time, the digest of its final state, and on rank 0 the state itself.
 *
 * @param rank the rank (its partition's index)
 * @param stageAttempt {@link SparkRanks#stageAttempt()} of the task
 * @param minibatchSize the examples of each rank's part of a step
 * @param stepsPerEpoch the steps of an epoch
 * @param examples the examples this rank's partition held
 * @param dropped of them, those no step trains on, in every epoch
 * @param resumedFromStep the global step this attempt started at (0 unless it resumed from a checkpoint)
 * @param stepsTrained the steps this attempt trained
 * @param losses the loss of this rank's minibatch at each step this attempt trained
 * @param setupNanos the time from this rank's task's start to its training loop's
 * @param trainingNanos the time of this rank's training loop
 * @param digest {@link #digest} of this rank's final parameters and updater state
 * @param state rank 0's final state; null on the other ranks
 */
record RankOutcome(int rank, int stageAttempt, int minibatchSize, int stepsPerEpoch, long examples, long dropped,
        long resumedFromStep, long stepsTrained, float[] losses, long setupNanos, long trainingNanos, String digest,
        State state) implements Serializable {
    private static final long serialVersionUID = 1L;
    /** How much of an array {@link #digest} hashes at a time. */
    private static final int DIGEST_WINDOW = 1 << 24;

    /**
     * A network's state for the driver: parameters and updater state (as {@link Nd4j#toByteArray}
     * writes them) and counters.
     *
     * @param updaterState null for a stateless updater
     */
    record State(byte[] params, byte[] updaterState, int iterationCount, int epochCount) implements Serializable {
        private static final long serialVersionUID = 1L;

        static State of(SparkNetwork network) {
            INDArray updaterState = network.updaterState();
            return new State(bytes(network.params()), updaterState == null ? null : bytes(updaterState),
                    network.iterationCount(), network.epochCount());
        }

        private static byte[] bytes(INDArray array) {
            try {
                return Nd4j.toByteArray(array);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Makes {@code network}'s parameters, updater state and counters these, in place. */
        void install(SparkNetwork network) {
            INDArray received = Nd4j.fromByteArray(params);
            try {
                network.params().assign(received.reshape(network.params().shape()));
            } finally {
                TensorMemory.close(received);
            }
            if (updaterState != null) {
                INDArray target = network.updaterState();
                INDArray state = Nd4j.fromByteArray(updaterState);
                try {
                    target.assign(state.reshape(target.shape()));
                } finally {
                    TensorMemory.close(state);
                }
            }
            network.setIterationCount(iterationCount);
            network.setEpochCount(epochCount);
        }
    }

    /**
     * SHA-256 of the arrays' data types, shapes and elements (in 'c' order, as the machine stores
     * them), in hex; null arrays are skipped. Equal digests mean bit-identical arrays.
     */
    static String digest(INDArray... arrays) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        for (INDArray array : arrays) {
            if (array == null) {
                continue;
            }
            sha.update((array.dataType() + Arrays.toString(array.shape())).getBytes(StandardCharsets.UTF_8));
            if (array.isEmpty()) {
                continue;
            }
            INDArray linear = TensorMemory.linearInCOrder(array);
            try {
                long bytes = linear.length() * linear.dataType().width();
                for (long from = 0; from < bytes; from += DIGEST_WINDOW) {
                    ByteBuffer window = TensorMemory.bytes(linear, from, (int) Math.min(DIGEST_WINDOW, bytes - from));
                    sha.update(window);
                }
            } finally {
                TensorMemory.closeIfCopy(array, linear);
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }
}
