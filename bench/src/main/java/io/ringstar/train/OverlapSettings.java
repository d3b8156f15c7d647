package io.ringstar.train;

import io.ringstar.GradientBuckets;
import io.ringstar.config.ByteSize;
import java.util.List;

/**
 * {@code train --overlap}: whether the synchronous training averages the gradients in
 * {@link GradientBuckets} while the backward pass computes them, and the buckets' size.
 *
 * @param enabled whether to overlap (sync mode only)
 * @param bucketBytes the size of every bucket but the first ({@link GradientBuckets#FIRST_BUCKET_BYTES})
 */
public record OverlapSettings(boolean enabled, long bucketBytes) {
    /** The switch's name, without "--". */
    public static final String FLAG = "overlap";
    /** The bucket size flag's name, without "--". */
    public static final String BUCKET_BYTES_FLAG = "bucket-bytes";
    /** No overlap: one blocking average per step, by the aggregator of {@code --algorithm}. */
    public static final OverlapSettings NONE = new OverlapSettings(false, GradientBuckets.DEFAULT_BUCKET_BYTES);

    public OverlapSettings {
        if (bucketBytes < 1) {
            throw new IllegalArgumentException("--" + BUCKET_BYTES_FLAG + " must be positive, was " + bucketBytes);
        }
    }

    /**
     * Settings from the flags: {@code bucketBytes} as given ({@code null} when absent; {@link ByteSize} syntax).
     *
     * @throws IllegalArgumentException for a bad size, or a bucket size without {@code --overlap}
     */
    public static OverlapSettings fromFlags(boolean overlap, String bucketBytes) {
        if (bucketBytes == null) {
            return new OverlapSettings(overlap, GradientBuckets.DEFAULT_BUCKET_BYTES);
        }
        if (!overlap) {
            throw new IllegalArgumentException("--" + BUCKET_BYTES_FLAG + " needs --" + FLAG);
        }
        try {
            return new OverlapSettings(true, ByteSize.parse(bucketBytes.trim()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + BUCKET_BYTES_FLAG + ": " + e.getMessage());
        }
    }

    /** The help of these flags, as {@link TrainSettings#flagHelp} gives it: the switch's label is empty. */
    public static List<TrainSettings.FlagHelp> flagHelp() {
        return List.of(
                new TrainSettings.FlagHelp(FLAG, "", "sync: average the gradients with the Communicator in buckets"
                        + " while the backward pass runs (GradientBuckets: each layer's gradient is marked ready as it"
                        + " is computed, the last layer's first; the step waits for every bucket before the update);"
                        + " --algorithm then only names the aggregator of the start (default: off)"),
                new TrainSettings.FlagHelp(BUCKET_BYTES_FLAG, "SIZE", "with --overlap: every bucket but the first"
                        + " (about " + ByteSize.format(GradientBuckets.FIRST_BUCKET_BYTES) + "); suffixes K, M, G"
                        + " (default: " + ByteSize.format(GradientBuckets.DEFAULT_BUCKET_BYTES) + ")"));
    }
}
