package io.ringstar.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What benchmarks.sh keeps about a run next to its results, so that the report can be written again
 * later: {@code run.txt} (one value a line, in this record's order) and {@code steps.txt} (a step a
 * line: name, command, seconds and exit status, separated by tabs).
 *
 * @param started the run's start, seconds since the epoch
 * @param finished its end, seconds since the epoch
 * @param loadBefore the load averages (1, 5, 15 min) before it
 * @param loadAfter the load averages after it
 * @param arguments the flags benchmarks.sh was given, quoted for the shell; empty for none
 * @param worldSize the sweep's world size
 * @param compareWorldSizes compare-mpi.sh's world sizes, comma-separated
 * @param compareType compare-mpi.sh's element type
 * @param rate the emulated cluster's link rate
 * @param steps the steps, in the order they ran
 */
public record RunRecord(long started, long finished, String loadBefore, String loadAfter, String arguments,
        int worldSize, String compareWorldSizes, String compareType, String rate, List<Step> steps) {
    private static final int RUN_LINES = 9;

    /**
     * One step of the run.
     *
     * @param name its name ({@code build}, {@code sweep-float}...)
     * @param command the command it ran
     * @param seconds how long it took
     * @param status its exit status
     */
    public record Step(String name, String command, long seconds, int status) {
        /** "passed in 12 s" or "FAILED (status 1) after 12 s; see LOG". */
        public String outcome(String log) {
            return status == 0 ? "passed in " + seconds + " s"
                    : "FAILED (status " + status + ") after " + seconds + " s; see " + log;
        }
    }

    /** Reads {@code run.txt} and {@code steps.txt} of {@code results}; a missing or short run.txt is refused. */
    public static RunRecord read(Path results) throws IOException {
        Path runFile = results.resolve("run.txt");
        if (!Files.isRegularFile(runFile) || Files.size(runFile) == 0) {
            throw new IllegalArgumentException("no earlier run in " + results + " to report on (no " + runFile + ")");
        }
        List<String> lines = Files.readAllLines(runFile, StandardCharsets.UTF_8);
        if (lines.size() < RUN_LINES) {
            throw new IllegalArgumentException(runFile + ":" + lines.size() + ": " + RUN_LINES
                    + " lines expected (start, end, load before, load after, flags, world size, compare world "
                    + "sizes, compare type, rate), found " + lines.size());
        }
        List<String> values = lines.stream().map(String::strip).toList();
        return new RunRecord(whole(runFile, 1, values.get(0)), whole(runFile, 2, values.get(1)), values.get(2),
                values.get(3), values.get(4), Math.toIntExact(whole(runFile, 6, values.get(5))), values.get(6),
                values.get(7), values.get(8), readSteps(results.resolve("steps.txt")));
    }

    /** The steps of {@code file}, none when it does not exist; a line without four tab-separated fields is refused. */
    static List<Step> readSteps(Path file) throws IOException {
        List<Step> steps = new ArrayList<>();
        if (!Files.exists(file)) {
            return steps;
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).isEmpty()) {
                continue;
            }
            String[] fields = lines.get(i).split("\t", -1);
            if (fields.length != 4) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": " + fields.length
                        + " tab-separated fields, expected 4 (name, command, seconds, status)");
            }
            steps.add(new Step(fields[0], fields[1], whole(file, i + 1, fields[2]),
                    Math.toIntExact(whole(file, i + 1, fields[3]))));
        }
        return List.copyOf(steps);
    }

    /** The step called {@code name}, the first if several are. */
    public Optional<Step> step(String name) {
        return steps.stream().filter(step -> step.name().equals(name)).findFirst();
    }

    /** The outcome of the step called {@code name}, or "not run". */
    public String outcome(String name, String log) {
        return step(name).map(step -> step.outcome(log)).orElse("not run");
    }

    /** The command of the step called {@code name}, or the empty string. */
    public String command(String name) {
        return step(name).map(Step::command).orElse("");
    }

    private static long whole(Path file, int line, String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(file + ":" + line + ": '" + text + "' is not a whole number", e);
        }
    }
}
