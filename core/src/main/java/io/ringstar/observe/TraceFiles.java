package io.ringstar.observe;

import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How the ranks' trace dumps are named and marked, for the tools that find and read them: each
 * rank writes one file per job, {@code ringstar-<job>-rank<R>.json}, the job id with every
 * character outside {@code [A-Za-z0-9._-]} replaced by {@code _}, holding a JSON object whose
 * {@code format} is {@value #FORMAT} and {@code version} {@value #VERSION} (the README's "When a job
 * stalls" gives every field).
 */
public final class TraceFiles {
    /** The {@code format} field of every dump. */
    public static final String FORMAT = "ringstar-trace";
    /** The {@code version} field of the dumps this library writes. */
    public static final int VERSION = 1;

    private static final Pattern NAME = Pattern.compile("ringstar-(.*)-rank(\\d+)\\.json");

    private TraceFiles() {
    }

    /** The name of {@code rank}'s dump of job {@code jobId}. */
    public static String fileName(String jobId, int rank) {
        return "ringstar-" + sanitised(jobId) + "-rank" + rank + ".json";
    }

    /**
     * The rank whose dump {@code fileName} is by its name, if it is one of job {@code jobId} (null:
     * of any job).
     */
    public static OptionalInt rankOf(String fileName, String jobId) {
        Matcher name = NAME.matcher(fileName);
        if (!name.matches() || (jobId != null && !name.group(1).equals(sanitised(jobId)))) {
            return OptionalInt.empty();
        }
        try {
            return OptionalInt.of(Integer.parseInt(name.group(2)));
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
    }

    /** The job id as file names carry it. */
    public static String sanitised(String jobId) {
        return jobId.replaceAll("[^A-Za-z0-9._-]", "_");
    }
}
