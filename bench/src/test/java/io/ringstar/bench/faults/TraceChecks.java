package io.ringstar.bench.faults;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.ringstar.cli.report.ReportCommand;
import io.ringstar.observe.TraceFiles;
import io.ringstar.testing.ChildProcess;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine;

/**
 * What the fault suite reads of issue 27's observability, in the test JVM: the trace dumps the ranks
 * wrote ({@code option.traceDir}), {@code ringstar report hang} run on them (the picocli command,
 * its output captured), and the stall warnings the ranks logged ({@code option.stallWarning}; JUL's
 * console handler writes them to the rank's stderr, which {@link ChildProcess} merges into its lines).
 */
final class TraceChecks {
    /** A stall warning's message, as {@code StallWarning} words it; JUL's level name comes before it. */
    private static final Pattern STALL = Pattern.compile(
            "(?:\\S+: )?(\\S+ #\\d+ on rank (\\d+): waiting .*\\. Late: (none|ranks? [\\d, and]+)"
            + "(?:; not answering: [^.]*)?\\. The job goes on until the timeout\\.)");
    private static final Pattern SILENT = Pattern.compile("(ranks? [\\d, and]+) (?:does|do) not answer");
    private static final Pattern NUMBER = Pattern.compile("\\d+");
    private static final Pattern RANKS = Pattern.compile("\\branks? (\\d+(?:(?:, |-)\\d+)*)");

    private TraceChecks() {
    }

    /** {@code ringstar report hang}'s exit status, standard output and standard error. */
    record Report(int status, String out, String err) {
        List<String> lines() {
            return out.lines().toList();
        }
    }

    /**
     * A directory for one job's dumps, emptied: beside the children's transcripts, so that the dumps
     * of a failed run can be read afterwards. Its path goes on a {@code RUN} line, so it has no blanks.
     */
    static Path freshDirectory(String name) {
        Path dir = ChildProcess.logDirectory().resolve(name).toAbsolutePath();
        assertTrue(!dir.toString().matches(".*\\s.*"), "a RUN line cannot carry a path with blanks: " + dir);
        try {
            if (Files.exists(dir)) {
                try (Stream<Path> entries = Files.walk(dir)) {
                    for (Path entry : entries.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(entry);
                    }
                }
            }
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make an empty " + dir, e);
        }
    }

    /** Runs {@code ringstar report hang dir} as the CLI would, its output captured. */
    static Report hang(Path dir) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = new CommandLine(new ReportCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
                .execute("hang", dir.toString());
        return new Report(status, out.toString(), err.toString());
    }

    /** Prints the report's lines, {@code [fault] report (<what>): <line>}, and what it said of unreadable files. */
    static Report printed(Report report, String what) {
        report.out().lines().forEach(line -> System.out.println("[fault] report (" + what + "): " + line));
        report.err().lines().forEach(line -> System.out.println("[fault] report (" + what + "), stderr: " + line));
        return report;
    }

    /** The path of {@code rank}'s dump of job {@code jobId} in {@code dir}. */
    static Path dumpOf(Path dir, String jobId, int rank) {
        return dir.resolve(TraceFiles.fileName(jobId, rank));
    }

    /** Waits until {@code rank}'s dump is in {@code dir} (a rank in no call writes it on a thread of its own). */
    static Path awaitDump(Path dir, String jobId, int rank, Duration limit) {
        Path file = dumpOf(dir, jobId, rank);
        long deadline = System.nanoTime() + limit.toNanos();
        while (!Files.isRegularFile(file)) {
            assertTrue(System.nanoTime() < deadline, "rank " + rank + " wrote no dump " + file + " within " + limit);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
        return file;
    }

    /** A dump's JSON object (the writer moves a whole file into place, so it is complete when it is there). */
    static JsonObject read(Path dump) {
        try {
            return JsonParser.parseString(Files.readString(dump, StandardCharsets.UTF_8)).getAsJsonObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + dump, e);
        }
    }

    /** The last entry of a dump: the rank's last call. */
    static JsonObject lastEntry(JsonObject dump) {
        List<JsonElement> entries = dump.getAsJsonArray("entries").asList();
        assertTrue(!entries.isEmpty(), "a dump without entries: " + dump);
        return entries.get(entries.size() - 1).getAsJsonObject();
    }

    /**
     * Writes a file that is no trace ({@code garbage.json}) and a copy of {@code dump} cut in half
     * into {@code dir}; returns their names.
     */
    static List<String> spoil(Path dir, Path dump) {
        try {
            byte[] noise = new byte[512];
            new Random(27).nextBytes(noise);
            Path garbage = Files.write(dir.resolve("garbage.json"), noise);
            byte[] whole = Files.readAllBytes(dump);
            byte[] half = Arrays.copyOf(whole, whole.length / 2);
            Path truncated = Files.write(dir.resolve("truncated-copy-of-" + dump.getFileName()), half);
            return List.of(garbage.getFileName().toString(), truncated.getFileName().toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write into " + dir, e);
        }
    }

    /** Removes the files {@link #spoil} wrote. */
    static void remove(Path dir, List<String> files) {
        try {
            for (String file : files) {
                Files.delete(dir.resolve(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clean " + dir, e);
        }
    }

    /**
     * Every rank a report line is about: "rank 2", "ranks 0, 1", "ranks 0-2" (a run of three or
     * more), leaving out the ranks named in an error's text and in parentheses (the peers waited on).
     */
    static List<Integer> ranksNamed(String line) {
        int error = line.indexOf("Exception: ");
        String about = (error < 0 ? line : line.substring(0, error)).replaceAll("\\([^)]*\\)", "");
        List<Integer> ranks = new ArrayList<>();
        Matcher named = RANKS.matcher(about);
        while (named.find()) {
            for (String part : named.group(1).split(", ")) {
                String[] range = part.split("-");
                int last = Integer.parseInt(range[range.length - 1]);
                for (int rank = Integer.parseInt(range[0]); rank <= last; rank++) {
                    ranks.add(rank);
                }
            }
        }
        return ranks;
    }

    /** A stall warning: its message, the rank that logged it, the ranks it names late and not answering. */
    record StallWarning(String message, int rank, List<Integer> late, List<Integer> silent) {
    }

    /** The stall warnings {@code child} (rank {@code rank}) logged so far. */
    static List<StallWarning> stallWarnings(ChildProcess child, int rank) {
        List<StallWarning> warnings = new ArrayList<>();
        for (String line : child.lines(text -> STALL.matcher(text).matches())) {
            Matcher warning = STALL.matcher(line);
            assertTrue(warning.matches());
            if (Integer.parseInt(warning.group(2)) != rank) {
                continue;
            }
            String message = warning.group(1);
            List<Integer> silent = new ArrayList<>();
            Matcher silence = SILENT.matcher(message);
            while (silence.find()) {
                silent.addAll(numbers(silence.group(1)));
            }
            String late = warning.group(3);
            warnings.add(new StallWarning(message, rank, late.equals("none") ? List.of() : numbers(late), silent));
        }
        return warnings;
    }

    private static List<Integer> numbers(String text) {
        List<Integer> numbers = new ArrayList<>();
        Matcher number = NUMBER.matcher(text);
        while (number.find()) {
            numbers.add(Integer.parseInt(number.group()));
        }
        return numbers;
    }
}
