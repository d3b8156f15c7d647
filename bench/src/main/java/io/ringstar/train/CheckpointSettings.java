package io.ringstar.train;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Whether and how {@code train} checkpoints and resumes ({@code --checkpoint-dir},
 * {@code --checkpoint-every}, {@code --resume}). Immutable and checked when built: a bad
 * combination fails with {@link IllegalArgumentException} naming the flag.
 *
 * <p>Each algorithm checkpoints into its own subdirectory, {@code DIR/ps} and {@code DIR/ring}, so
 * that {@code --algorithm both} resumes each where it stopped. Only rank 0 reads or writes them:
 * the other ranks never need to see the directory.
 *
 * @param directory where checkpoints go, or {@code null} for none
 * @param every a checkpoint after every this many steps (and after the last step); 1 or more
 * @param resume continue from the newest valid checkpoint in the directory; with none there, the
 *     run starts from step 0 and says so (so one command line serves the first start and every
 *     restart)
 */
public record CheckpointSettings(Path directory, int every, boolean resume) {
    /** Steps between checkpoints when {@code --checkpoint-every} is not given. */
    public static final int DEFAULT_EVERY = 100;
    /** No checkpoints, no resume. */
    public static final CheckpointSettings NONE = new CheckpointSettings(null, DEFAULT_EVERY, false);

    /** The flags that take a value, without "--". */
    public static final List<String> VALUE_FLAGS = List.of("checkpoint-dir", "checkpoint-every");
    /** The flag that takes none, without "--". */
    public static final String RESUME_FLAG = "resume";

    public CheckpointSettings {
        if (every < 1) {
            throw new IllegalArgumentException("--checkpoint-every must be a positive integer, was " + every);
        }
        if (resume && directory == null) {
            throw new IllegalArgumentException("--resume needs --checkpoint-dir (where the checkpoints are)");
        }
    }

    /** Whether checkpoints are written at all. */
    public boolean enabled() {
        return directory != null;
    }

    /**
     * Settings from the value flags (names without "--"; others are ignored) and whether
     * {@code --resume} was given.
     *
     * @throws IllegalArgumentException for a bad value or combination, naming the flag
     */
    public static CheckpointSettings fromFlags(Map<String, String> flags, boolean resume) {
        String dir = flags.get("checkpoint-dir");
        String every = flags.get("checkpoint-every");
        if (dir != null && dir.isBlank()) {
            throw new IllegalArgumentException("--checkpoint-dir needs a value");
        }
        if (every != null && dir == null) {
            throw new IllegalArgumentException("--checkpoint-every needs --checkpoint-dir (where to write them)");
        }
        int steps = DEFAULT_EVERY;
        if (every != null) {
            try {
                steps = Integer.parseInt(every.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--checkpoint-every '" + every + "' is not an integer");
            }
        }
        return new CheckpointSettings(dir == null ? null : Path.of(dir), steps, resume);
    }

    /** Whether a checkpoint is due once {@code done} of {@code steps} steps are done. */
    boolean due(int done, int steps) {
        return enabled() && (done % every == 0 || done == steps);
    }

    /** The help of these flags, as {@link TrainSettings#flagHelp} gives it: the resume flag's label is empty. */
    public static List<TrainSettings.FlagHelp> flagHelp() {
        return List.of(
                new TrainSettings.FlagHelp("checkpoint-dir", "DIR", "rank 0 saves parameters and step to"
                        + " DIR/<algorithm> (newest 2 kept; async: each server its own state to DIR/ps/server-<s>)"
                        + " (default: none)"),
                new TrainSettings.FlagHelp("checkpoint-every", "N", "a checkpoint every N steps and after the last"
                        + " (default: " + DEFAULT_EVERY + ")"),
                new TrainSettings.FlagHelp(RESUME_FLAG, "", "continue from the newest valid checkpoint in"
                        + " --checkpoint-dir (none there: start at step 0, saying so); model, data, seed, world size,"
                        + " batch size and lr must be those it was saved with"));
    }
}
