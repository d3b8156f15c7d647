package io.ringstar;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How an {@link AsyncParameterServer} trains: the optimizer its servers apply, the staleness
 * bound, and where and how often each server checkpoints. Immutable; values are checked when
 * built. Every rank of a group gives the same settings (the checkpoint directory may be another
 * path to the same data, or absent on workers, which never read or write it).
 *
 * <pre>{@code
 * AsyncSettings settings = AsyncSettings.builder(SgdMomentum.plain(0.1f))
 *         .maxStaleness(4)
 *         .checkpointDirectory(Path.of("ckpt")).checkpointEvery(1000).resume(true)
 *         .build();
 * }</pre>
 */
public final class AsyncSettings {
    /** The staleness bound when none is given: none at all. */
    public static final int UNBOUNDED = Integer.MAX_VALUE;

    private final ServerOptimizer optimizer;
    private final int maxStaleness;
    private final Path checkpointDirectory;
    private final long checkpointEvery;
    private final boolean resume;
    private final Map<String, String> checkpointMetadata;

    private AsyncSettings(Builder builder) {
        this.optimizer = builder.optimizer;
        this.maxStaleness = builder.maxStaleness;
        this.checkpointDirectory = builder.checkpointDirectory;
        this.checkpointEvery = builder.checkpointEvery;
        this.resume = builder.resume;
        this.checkpointMetadata = Collections.unmodifiableMap(new LinkedHashMap<>(builder.checkpointMetadata));
    }

    /** A builder with {@code optimizer} and the defaults: no staleness bound, no checkpoints. */
    public static Builder builder(ServerOptimizer optimizer) {
        return new Builder(optimizer);
    }

    /** The rule the servers apply to each gradient. */
    public ServerOptimizer optimizer() {
        return optimizer;
    }

    /**
     * K, in worker steps: a server holds back its reply to a worker whose step count (its gradients
     * this server applied) is more than K ahead of the lowest among the unfinished workers; 0 is
     * lock step, {@link #UNBOUNDED} (the default) no bound.
     */
    public int maxStaleness() {
        return maxStaleness;
    }

    /** Where the servers checkpoint, each in its subdirectory {@code server-<s>}; empty for no checkpoints. */
    public Optional<Path> checkpointDirectory() {
        return Optional.ofNullable(checkpointDirectory);
    }

    /** A server checkpoints after every this many updates it applied, and at the end; 0: at the end only. */
    public long checkpointEvery() {
        return checkpointEvery;
    }

    /** Whether the servers start from their newest checkpoint when there is one. */
    public boolean resume() {
        return resume;
    }

    /** Entries every checkpoint records and a resume requires equal (the caller's run identity: model, seed...). */
    public Map<String, String> checkpointMetadata() {
        return checkpointMetadata;
    }

    /** Builds {@link AsyncSettings}; every setter checks its value at once. */
    public static final class Builder {
        private final ServerOptimizer optimizer;
        private int maxStaleness = UNBOUNDED;
        private Path checkpointDirectory;
        private long checkpointEvery;
        private boolean resume;
        private final Map<String, String> checkpointMetadata = new LinkedHashMap<>();

        private Builder(ServerOptimizer optimizer) {
            this.optimizer = Objects.requireNonNull(optimizer, "optimizer");
        }

        /** See {@link AsyncSettings#maxStaleness()}; 0 or more. */
        public Builder maxStaleness(int maxStaleness) {
            if (maxStaleness < 0) {
                throw new InvalidConfigException("maxStaleness", maxStaleness, "must be 0 or more");
            }
            this.maxStaleness = maxStaleness;
            return this;
        }

        /** See {@link AsyncSettings#checkpointDirectory()}. */
        public Builder checkpointDirectory(Path directory) {
            this.checkpointDirectory = Objects.requireNonNull(directory, "directory");
            return this;
        }

        /** See {@link AsyncSettings#checkpointEvery()}; 0 or more. */
        public Builder checkpointEvery(long updates) {
            if (updates < 0) {
                throw new InvalidConfigException("checkpointEvery", updates, "must be 0 or more");
            }
            this.checkpointEvery = updates;
            return this;
        }

        /** See {@link AsyncSettings#resume()}. */
        public Builder resume(boolean resume) {
            this.resume = resume;
            return this;
        }

        /** Adds an entry to {@link AsyncSettings#checkpointMetadata()}. */
        public Builder checkpointMetadata(String key, String value) {
            checkpointMetadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public AsyncSettings build() {
            return new AsyncSettings(this);
        }
    }
}
