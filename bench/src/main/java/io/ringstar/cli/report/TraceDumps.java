package io.ringstar.cli.report;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.ringstar.observe.TraceFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The trace dumps of a directory: every {@code *.json} file in it (not in its subdirectories) that is a
 * ringstar trace of a version this reader knows, grouped by job, and every other file
 * with what is wrong with it. A bad file never stops the reading of the others: after a hang the
 * dumps that did get written are what there is.
 *
 * <p>The format is core's flight recorder's ({@code ringstar-<jobId>-rank<R>.json}, one per rank's
 * transport, whatever communicators and aggregators shared it; version
 * {@value #VERSION}). Unknown fields are ignored, as the format asks, so a writer may add some
 * without a new version; a known field of the wrong type, or entries out of sequence order, reject
 * the file, naming the field.
 *
 * @param jobs the readable dumps, by job id, each job's dumps by rank
 * @param skipped the files not read, and the dumps left out for a newer one of the same rank, in file name order
 */
record TraceDumps(List<Job> jobs, List<Skipped> skipped) {
    /** The value of a dump's {@code format} field. */
    static final String FORMAT = TraceFiles.FORMAT;
    /** The format version this reader knows. */
    static final int VERSION = TraceFiles.VERSION;
    /** How much older than a job's newest dump a dump must be to count as an earlier run's. */
    static final long EARLIER_RUN_MILLIS = 3_600_000;
    private static final Pattern GSON_POSITION =
            Pattern.compile("(.*?) at line (\\d+) column (\\d+).*", Pattern.DOTALL);
    private static final int SHOWN_VALUE_CHARS = 40;

    /**
     * A file that is not read, or a dump left out.
     *
     * @param file the file's name in the directory
     * @param problem what is wrong, as in {@code not a ringstar trace: truncated at byte 812}
     */
    record Skipped(String file, String problem) {
        @Override
        public String toString() {
            return file + ": " + problem;
        }
    }

    /**
     * The dumps of one job, at most one per rank; {@code owner} lists what made the calls.
     *
     * @param worldSize the largest world size its dumps give (they agree unless a job id was reused)
     * @param worldSizes every world size its dumps give, normally one
     */
    record Job(String jobId, String owner, int worldSize, List<Integer> worldSizes, Map<Integer, TraceDump> byRank) {
        Job {
            worldSizes = List.copyOf(worldSizes);
            byRank = Collections.unmodifiableMap(new TreeMap<>(byRank));
        }

        /** The dumps in rank order. */
        List<TraceDump> dumps() {
            return List.copyOf(byRank.values());
        }

        /** Whether {@code file} is by its name the dump of {@code rank} of this job (one file per rank and job). */
        boolean names(String file, int rank) {
            return TraceFiles.rankOf(file, jobId).equals(java.util.OptionalInt.of(rank));
        }
    }

    /** A file that is not a dump this reader can use; the message says why. */
    private static final class BadDump extends Exception {
        private static final long serialVersionUID = 1L;

        BadDump(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Reads the dumps of {@code dir}.
     *
     * @throws IllegalArgumentException when {@code dir} does not exist or is no directory
     * @throws IOException when the directory cannot be listed
     */
    static TraceDumps read(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            throw new IllegalArgumentException("no such directory: " + dir);
        }
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("not a directory: " + dir);
        }
        List<Path> files;
        try (Stream<Path> listing = Files.list(dir)) {
            files = listing.filter(file -> file.getFileName().toString().endsWith(".json"))
                    .filter(Files::isRegularFile).sorted(Comparator.comparing(file -> file.getFileName().toString()))
                    .toList();
        }
        List<TraceDump> dumps = new ArrayList<>();
        List<Skipped> skipped = new ArrayList<>();
        for (Path file : files) {
            String name = file.getFileName().toString();
            try {
                dumps.add(parse(name, Files.readAllBytes(file)));
            } catch (BadDump e) {
                skipped.add(new Skipped(name, e.getMessage()));
            } catch (IOException e) {
                skipped.add(new Skipped(name, "cannot read it: " + e));
            }
        }
        return group(dumps, skipped);
    }

    /**
     * The dumps grouped by job (one sequence of calls per rank, whatever made them: ranks of one job
     * whose owners differ still compare); of two dumps of one rank the newer is kept.
     */
    private static TraceDumps group(List<TraceDump> dumps, List<Skipped> skipped) {
        Map<String, Map<Integer, TraceDump>> byJob = new TreeMap<>();
        for (TraceDump dump : dumps) {
            Map<Integer, TraceDump> ranks = byJob.computeIfAbsent(dump.jobId(), id -> new TreeMap<>());
            TraceDump other = ranks.get(dump.rank());
            if (other == null) {
                ranks.put(dump.rank(), dump);
                continue;
            }
            // Copies or renamed files of one rank: the later dump knows more of the same ring.
            boolean newer = dump.epochMillis() > other.epochMillis();
            TraceDump kept = newer ? dump : other;
            TraceDump left = newer ? other : dump;
            ranks.put(dump.rank(), kept);
            skipped.add(new Skipped(left.file(), "left out: an older dump of rank " + left.rank() + " ("
                    + left.owner() + " of job " + left.jobId() + ") than " + kept.file()));
        }
        for (Map.Entry<String, Map<Integer, TraceDump>> job : byJob.entrySet()) {
            leaveOutEarlierRuns(job.getKey(), job.getValue(), skipped);
        }
        List<Job> jobs = new ArrayList<>();
        byJob.forEach((jobId, ranks) -> {
            List<Integer> sizes = ranks.values().stream().map(TraceDump::worldSize).distinct().sorted().toList();
            String owners = ranks.values().stream().map(TraceDump::owner).distinct().sorted()
                    .collect(java.util.stream.Collectors.joining(", "));
            jobs.add(new Job(jobId, owners, sizes.get(sizes.size() - 1), sizes, ranks));
        });
        skipped.sort(Comparator.comparing(Skipped::file));
        return new TraceDumps(jobs, skipped);
    }

    /** Whether no dump could be read. */
    boolean isEmpty() {
        return jobs.isEmpty();
    }

    /**
     * Names every skipped file on {@code err}, each on a line of its own after {@code command}'s name,
     * and says so when no dump could be read.
     *
     * @return whether some dump could be read
     */
    boolean reportSkipped(PrintWriter err, String command, Path dir) {
        for (Skipped file : skipped) {
            err.println(command + ": " + file);
        }
        if (isEmpty()) {
            err.println(command + ": " + (skipped.isEmpty() ? "no trace dump (*.json) in "
                    : "no readable trace dump in ") + dir);
        }
        return !isEmpty();
    }

    /**
     * Leaves out the dumps of a job written long before its newest: a trace directory reused by a
     * later run of the same job id still holds the earlier run's dump of a rank that did not dump
     * this time, which would otherwise stand in for it. The ranks of one run dump within a few of
     * their timeouts of each other; an hour apart is another run.
     */
    private static void leaveOutEarlierRuns(String jobId, Map<Integer, TraceDump> ranks, List<Skipped> skipped) {
        long newest = ranks.values().stream().mapToLong(TraceDump::epochMillis).max().orElse(0);
        ranks.values().removeIf(dump -> {
            long older = newest - dump.epochMillis();
            if (older <= EARLIER_RUN_MILLIS) {
                return false;
            }
            skipped.add(new Skipped(dump.file(), "left out: written " + older / 60_000 + " min before the newest dump"
                    + " of job " + jobId + ", by an earlier run (give each run a trace directory of its own)"));
            return true;
        });
    }

    /** The readable dumps, by job, owner and rank. */
    List<TraceDump> all() {
        return jobs.stream().flatMap(job -> job.dumps().stream()).toList();
    }

    /** One file's dump; {@code file} is its name, for the dump and the messages. */
    private static TraceDump parse(String file, byte[] bytes) throws BadDump {
        String text = utf8(bytes, bytes.length);
        if (text == null) {
            // A cut through a character of several bytes is a truncation too, not a wrong encoding.
            String head = utf8(bytes, completeLength(bytes));
            throw new BadDump("not a ringstar trace: " + (head != null && unclosed(head)
                    ? "truncated at byte " + bytes.length : "not UTF-8 text"));
        }
        if (text.isBlank()) {
            throw new BadDump("not a ringstar trace: " + (bytes.length == 0 ? "empty file" : "only white space"));
        }
        JsonElement json = json(text, bytes.length);
        if (!json.isJsonObject()) {
            throw new BadDump("not a ringstar trace: JSON, but not an object");
        }
        JsonObject top = json.getAsJsonObject();
        String format = string(top, "", "format", false);
        if (!FORMAT.equals(format)) {
            throw new BadDump("not a ringstar trace: " + (format == null ? "no \"format\" field"
                    : "\"format\" is " + shown(top.get("format")) + ", not \"" + FORMAT + "\""));
        }
        long version = required(top, "", "version");
        if (version != VERSION) {
            throw new BadDump("a ringstar trace of version " + version + "; this reader knows version " + VERSION);
        }
        JsonObject clock = object(top, "clock");
        int worldSize = (int) range(top, "", "worldSize", 1, Integer.MAX_VALUE);
        int rank = (int) range(top, "", "rank", 0, worldSize - 1);
        Long dropped = optionalWhole(top, "", "dropped");
        if (dropped != null && dropped < 0) {
            throw bad("dropped", dropped + " is negative");
        }
        return new TraceDump(file, string(top, "", "jobId", true), string(top, "", "owner", true), rank, worldSize,
                string(top, "", "host", false), optionalWhole(top, "", "pid"), string(top, "", "reason", false),
                required(clock, "clock.", "epochMillis"), required(clock, "clock.", "nanoTime"),
                dropped == null ? 0 : dropped, optionalWhole(top, "", "lastDroppedSequence"), entries(top));
    }

    /**
     * The length of {@code bytes} without a last UTF-8 character that is cut short (a lead byte
     * followed by fewer continuation bytes than it announces), or the whole length.
     */
    private static int completeLength(byte[] bytes) {
        int lead = bytes.length - 1;
        while (lead >= 0 && lead > bytes.length - 4 && (bytes[lead] & 0xC0) == 0x80) {
            lead--;
        }
        if (lead < 0) {
            return bytes.length;
        }
        int b = bytes[lead] & 0xFF;
        int announced = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        return announced > bytes.length - lead ? lead : bytes.length;
    }

    /** The first {@code length} bytes as UTF-8, or null when they are not UTF-8. */
    private static String utf8(byte[] bytes, int length) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, 0, length))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** The text as JSON, strictly (no comments, no single quotes), and all of it. */
    private static JsonElement json(String text, int byteLength) throws BadDump {
        JsonReader reader = new JsonReader(new StringReader(text));
        reader.setStrictness(Strictness.STRICT);
        JsonElement json;
        try {
            json = JsonParser.parseReader(reader);
        } catch (JsonParseException e) {
            if (unclosed(text)) {
                // An interrupted copy (the writer itself renames a complete file into place).
                throw new BadDump("not a ringstar trace: truncated at byte " + byteLength);
            }
            // Gson's message is "[exception class: ]reason at line L column C path P\nSee <link>".
            String message = String.valueOf(e.getMessage()).replaceFirst("^[\\w.$]+(Exception|Error): ", "");
            Matcher where = GSON_POSITION.matcher(message);
            if (!where.matches()) {
                throw new BadDump("not a ringstar trace: not JSON: " + message.lines().findFirst().orElse(message));
            }
            int line = Integer.parseInt(where.group(2));
            int column = Integer.parseInt(where.group(3));
            // Strict mode's complaint names the setting, not the text: say what is there instead.
            boolean lenientHint = where.group(1).contains("Strictness") || where.group(1).contains("LENIENT");
            throw new BadDump("not a ringstar trace: not JSON: " + (lenientHint ? "unexpected text" : where.group(1))
                    + " at line " + line + " column " + column + (lenientHint ? excerpt(text, line, column) : ""));
        }
        boolean more;
        try {
            more = reader.peek() != JsonToken.END_DOCUMENT;
        } catch (IOException e) {
            // Strict mode refuses a second top-level value outright.
            more = true;
        }
        if (more) {
            throw new BadDump("not a ringstar trace: more after the JSON value" + position(reader.toString()));
        }
        return json;
    }

    /** The text from line {@code line}, column {@code column} (both from 1), a few characters of it, quoted. */
    private static String excerpt(String text, int line, int column) {
        List<String> lines = text.lines().toList();
        if (line < 1 || line > lines.size() || column < 1 || column > lines.get(line - 1).length()) {
            return "";
        }
        String rest = lines.get(line - 1).substring(column - 1).strip();
        return rest.isEmpty() ? "" : ": " + (rest.length() <= SHOWN_VALUE_CHARS / 2 ? rest
                : rest.substring(0, SHOWN_VALUE_CHARS / 2) + "...");
    }

    /** Gson's "at line L column C" in a reader's description, as a suffix. */
    private static String position(String described) {
        Matcher where = GSON_POSITION.matcher(described);
        return where.matches() ? " at line " + where.group(2) + " column " + where.group(3) : "";
    }

    /**
     * Whether the text ends inside a string or with an object or array still open: the JSON was cut,
     * not written wrong. Only brackets outside strings count.
     */
    static boolean unclosed(String text) {
        int depth = 0;
        boolean inString = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
        return inString || depth > 0;
    }

    private static List<TraceDump.Entry> entries(JsonObject top) throws BadDump {
        JsonElement value = top.get("entries");
        if (value == null || value.isJsonNull()) {
            throw bad("entries", "missing");
        }
        if (!value.isJsonArray()) {
            throw bad("entries", "expected an array, found " + shown(value));
        }
        JsonArray array = value.getAsJsonArray();
        List<TraceDump.Entry> entries = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            String at = "entries[" + i + "]";
            if (!array.get(i).isJsonObject()) {
                throw bad(at, "expected an object, found " + shown(array.get(i)));
            }
            TraceDump.Entry entry = entry(array.get(i).getAsJsonObject(), at + ".");
            if (!entries.isEmpty() && entry.sequence() <= entries.get(entries.size() - 1).sequence()) {
                throw bad(at + ".sequence", entry.sequence() + " after " + entries.get(entries.size() - 1).sequence()
                        + "; entries must be in sequence order, each once");
            }
            entries.add(entry);
        }
        return entries;
    }

    private static TraceDump.Entry entry(JsonObject json, String at) throws BadDump {
        String stateName = string(json, at, "state", true);
        TraceDump.State state;
        try {
            state = TraceDump.State.valueOf(stateName.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw bad(at + "state", "unknown state \"" + stateName + "\" (issued, started, completed or failed)");
        }
        Map<String, Long> elements = new LinkedHashMap<>();
        JsonElement counts = json.get("elements");
        if (counts != null && !counts.isJsonNull()) {
            if (!counts.isJsonObject()) {
                throw bad(at + "elements", "expected an object of counts per data type, found " + shown(counts));
            }
            for (String type : counts.getAsJsonObject().keySet()) {
                elements.put(type, required(counts.getAsJsonObject(), at + "elements.", type));
            }
        }
        return new TraceDump.Entry(range(json, at, "sequence", 1, Long.MAX_VALUE), string(json, at, "operation", true),
                string(json, at, "algorithm", false), optionalInt(json, at, "root"), elements,
                optionalInt(json, at, "tensors"), optionalWhole(json, at, "bytes"), state,
                required(json, at, "issuedNanos"), required(json, at, "startedNanos"),
                required(json, at, "endedNanos"), optionalWhole(json, at, "waitNanos"),
                optionalInt(json, at, "waitingOn"), string(json, at, "error", false));
    }

    private static JsonObject object(JsonObject json, String name) throws BadDump {
        JsonElement value = json.get(name);
        if (value == null || value.isJsonNull()) {
            throw bad(name, "missing");
        }
        if (!value.isJsonObject()) {
            throw bad(name, "expected an object, found " + shown(value));
        }
        return value.getAsJsonObject();
    }

    private static String string(JsonObject json, String at, String name, boolean required) throws BadDump {
        JsonElement value = json.get(name);
        if (value == null || value.isJsonNull()) {
            if (required) {
                throw bad(at + name, "missing");
            }
            return null;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw bad(at + name, "expected a string, found " + shown(value));
        }
        return value.getAsString();
    }

    private static long required(JsonObject json, String at, String name) throws BadDump {
        Long value = optionalWhole(json, at, name);
        if (value == null) {
            throw bad(at + name, "missing");
        }
        return value;
    }

    private static long range(JsonObject json, String at, String name, long min, long max) throws BadDump {
        long value = required(json, at, name);
        if (value < min || value > max) {
            throw bad(at + name, value + " is outside " + min + ".." + (max == Long.MAX_VALUE ? "" : max));
        }
        return value;
    }

    /** A whole number in int's range, or null when absent or null. */
    private static Integer optionalInt(JsonObject json, String at, String name) throws BadDump {
        Long value = optionalWhole(json, at, name);
        if (value != null && (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)) {
            throw bad(at + name, value + " is outside an int's range");
        }
        return value == null ? null : value.intValue();
    }

    /** A whole number that fits a long, or null when absent or null; 1.5, 1e30 and "17" are refused. */
    private static Long optionalWhole(JsonObject json, String at, String name) throws BadDump {
        JsonElement value = json.get(name);
        if (value == null || value.isJsonNull()) {
            return null;
        }
        if (value.isJsonPrimitive() && value.getAsJsonPrimitive().isNumber()) {
            try {
                return new BigDecimal(value.getAsJsonPrimitive().getAsString()).longValueExact();
            } catch (ArithmeticException | NumberFormatException e) {
                // Falls through to the message below.
            }
        }
        throw bad(at + name, "expected a whole number, found " + shown(value));
    }

    private static BadDump bad(String field, String problem) {
        return new BadDump("bad ringstar trace: " + field + ": " + problem);
    }

    /** A value as JSON, cut short enough for a one-line message. */
    private static String shown(JsonElement value) {
        String text = value instanceof JsonPrimitive || value.isJsonNull() ? value.toString()
                : value.isJsonArray() ? "an array" : "an object";
        return text.length() <= SHOWN_VALUE_CHARS ? text : text.substring(0, SHOWN_VALUE_CHARS) + "...";
    }
}
