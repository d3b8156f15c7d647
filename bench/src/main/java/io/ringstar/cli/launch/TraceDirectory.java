package io.ringstar.cli.launch;

import io.ringstar.observe.TraceFiles;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the ranks of one job write their trace dumps (core's option {@code traceDir}), and which
 * files there are this job's. A rank writes {@code ringstar-<jobId>-rank<R>.json} ({@link TraceFiles})
 * on its first failure, and a later job of the
 * same id and rank overwrites it; so a file counts only if it was written since the launch began,
 * and, when the job id is known, only if it carries that id. The format is the README's ("When a
 * job stalls"); {@code ringstar report hang DIR} reads it.
 *
 * @param directory the trace directory, absolute: the ranks run in the launcher's working directory
 * @param jobId the job's id (option {@code jobId}), or {@code null} when the launcher cannot know it
 *     (a command that is not this jar's): then a dump of any id counts
 */
public record TraceDirectory(Path directory, String jobId) {
    /** The command that reads the dumps, as the README and the ranks' own log line give it. */
    public static final String READ_COMMAND = "ringstar report hang";
    private static final long POLL_MILLIS = 50;

    /** Makes {@code directory} absolute. */
    public TraceDirectory {
        directory = directory.toAbsolutePath().normalize();
    }

    /**
     * This job's dumps in the directory, by rank then name: those of ranks {@code 0..nproc-1}
     * written since {@code sinceMillis} (wall clock). None when the directory does not exist: no
     * rank has written one yet.
     */
    List<Path> present(int nproc, long sinceMillis) {
        // File systems that keep whole seconds would date a dump of this second before the launch.
        long since = sinceMillis - sinceMillis % 1000;
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "ringstar-*.json")) {
            for (Path file : files) {
                int rank = rankOf(file);
                if (rank >= 0 && rank < nproc && Files.getLastModifiedTime(file).toMillis() >= since) {
                    found.add(file);
                }
            }
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the trace directory " + directory, e);
        }
        found.sort(Comparator.comparingInt(this::rankOf).thenComparing(file -> file.getFileName().toString()));
        return found;
    }

    /**
     * Waits until each rank of {@code waitFor} has a dump here, or {@code atMost} has passed: the
     * ranks still running when another failed write theirs as they hear of it, and a rank stopped
     * before it wrote leaves none. Returns early when interrupted, with the interrupt kept, and when
     * the directory cannot be listed ({@link #report} says so).
     */
    void await(Set<Integer> waitFor, int nproc, long sinceMillis, Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        try {
            while (!ranksOf(present(nproc, sinceMillis)).containsAll(waitFor) && System.nanoTime() - deadline < 0) {
                Thread.sleep(POLL_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (UncheckedIOException e) {
            // Nothing to wait for that could be listed; the report names the problem.
        }
    }

    /**
     * The lines that follow a rank's failure: the directory, this job's dumps there and the
     * command that reads them, or that no rank wrote one.
     */
    void report(int nproc, long sinceMillis, PrintStream err) {
        List<Path> dumps;
        try {
            dumps = present(nproc, sinceMillis);
        } catch (UncheckedIOException e) {
            err.println("ringstar launch: cannot list the trace directory " + directory + ": " + e.getCause());
            return;
        }
        String job = jobId == null ? "" : " of job '" + jobId + "'";
        if (dumps.isEmpty()) {
            err.println("ringstar launch: no rank wrote a trace dump" + job + " to " + directory + " (a rank writes"
                    + " one when a collective fails on it or it hears of a peer's failure)");
            return;
        }
        Set<Integer> missing = new TreeSet<>();
        for (int rank = 0; rank < nproc; rank++) {
            missing.add(rank);
        }
        missing.removeAll(ranksOf(dumps));
        err.println("ringstar launch: trace dumps" + job + " in " + directory + " (" + dumps.size() + " file"
                + (dumps.size() == 1 ? "" : "s") + (missing.isEmpty() ? "" : "; none from ranks " + missing) + "):");
        dumps.forEach(file -> err.println("  " + file.getFileName()));
        err.println("ringstar launch: read them with: " + READ_COMMAND + " " + directory);
    }

    /** The line that follows a rank's failure when the ranks had no trace directory. */
    static void suggest(PrintStream err) {
        err.println("ringstar launch: the ranks kept no trace dumps; give --trace-dir DIR (to launch or to the"
                + " command) and each rank writes its last collectives there when it fails, for " + READ_COMMAND
                + " DIR");
    }

    private Set<Integer> ranksOf(List<Path> dumps) {
        Set<Integer> ranks = new TreeSet<>();
        dumps.forEach(file -> ranks.add(rankOf(file)));
        return ranks;
    }

    /** The rank in a dump's name, or -1 for a name that is no dump of this job. */
    private int rankOf(Path file) {
        return TraceFiles.rankOf(file.getFileName().toString(), jobId).orElse(-1);
    }
}
