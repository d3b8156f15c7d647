package io.ringstar.train;

import java.util.List;
import java.util.Map;

/**
 * {@code train --slow-rank R --slow-ms M}: rank {@code R} sleeps {@code M} milliseconds before each
 * of its steps, in sync and async modes alike, to measure what one slow rank costs (a straggler:
 * sync training waits for it every step, async training only as {@code --max-staleness} says). In
 * async mode only workers take steps, so {@code R} should be a worker rank (at least the number of
 * servers); a server rank sleeps never.
 *
 * @param rank the rank that sleeps, or -1 for none
 * @param millis how long it sleeps before each step; 0 when none sleeps
 */
public record SlowRankSettings(int rank, long millis) {
    /** The flags, without "--". */
    public static final List<String> FLAGS = List.of("slow-rank", "slow-ms");
    /** No rank sleeps. */
    public static final SlowRankSettings NONE = new SlowRankSettings(-1, 0);

    public SlowRankSettings {
        if (rank < -1 || (rank >= 0) != (millis > 0) || millis < 0) {
            throw new IllegalArgumentException("--slow-rank needs a rank of 0 or more and --slow-ms a positive"
                    + " number of milliseconds, both or neither; got rank " + rank + ", " + millis + " ms");
        }
    }

    /** Whether a rank sleeps at all. */
    public boolean enabled() {
        return rank >= 0;
    }

    /**
     * Settings from the flags (names without "--"; others are ignored).
     *
     * @throws IllegalArgumentException for a value that is not an integer, or one flag without the other
     */
    public static SlowRankSettings fromFlags(Map<String, String> flags) {
        String rank = flags.get("slow-rank");
        String millis = flags.get("slow-ms");
        if (rank == null && millis == null) {
            return NONE;
        }
        if (rank == null || millis == null) {
            throw new IllegalArgumentException("--slow-rank and --slow-ms go together");
        }
        return new SlowRankSettings(integer("slow-rank", rank), integer("slow-ms", millis));
    }

    private static int integer(String flag, String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + flag + " '" + value + "' is not an integer");
        }
    }

    /** Sleeps if {@code stepping} is the slow rank. */
    void beforeStep(int stepping) throws InterruptedException {
        if (stepping == rank) {
            Thread.sleep(millis);
        }
    }

    /** The help of these flags, as {@link TrainSettings#flagHelp} gives it. */
    public static List<TrainSettings.FlagHelp> flagHelp() {
        return List.of(
                new TrainSettings.FlagHelp("slow-rank", "R", "rank R sleeps --slow-ms before each of its steps (a"
                        + " straggler; async: pick a worker rank, at least the number of servers) (default: none)"),
                new TrainSettings.FlagHelp("slow-ms", "M", "with --slow-rank: milliseconds of that sleep"));
    }
}
