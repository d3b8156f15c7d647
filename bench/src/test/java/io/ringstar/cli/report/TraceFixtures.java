package io.ringstar.cli.report;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;

/**
 * Trace dumps as JSON text, the way core's flight recorder writes them, for the tests of the
 * {@code hang} and {@code timeline} reports; and the report command line run as the jar runs it.
 *
 * <p>Times are given in milliseconds of wall clock since {@link #ORIGIN}; each rank's dump turns them
 * into its own nanoTime clock, whose zero differs per rank as it does between processes, so a test
 * that lines calls up across ranks also checks the conversion back to the wall clock.
 */
final class TraceFixtures {
    /** The wall clock's origin of the tests' times, in milliseconds since the epoch. */
    static final long ORIGIN = 1_764_390_000_000L;

    private TraceFixtures() {
    }

    /** How a command line ended: its status and what it wrote. */
    record Outcome(int status, String out, String err) {
    }

    /** Runs {@code ringstar report ARGS} through picocli, as {@link ReportCommandTest} does. */
    static Outcome report(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = new CommandLine(new ReportCommand()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
                .execute(args);
        return new Outcome(status, out.toString(), err.toString());
    }

    /** A dump of {@code rank} of job "ringstar", owner aggregator, dumped on request at {@code dumpedAtMillis}. */
    static Dump dump(int rank, int worldSize, long dumpedAtMillis) {
        return new Dump(rank, worldSize, dumpedAtMillis);
    }

    /** One rank's dump under construction. */
    static final class Dump {
        private final int rank;
        private final int worldSize;
        private final long epochMillis;
        private final long nanoTime;
        private String jobId = "ringstar";
        private String owner = "aggregator";
        private String reason = "request";
        private long dropped;
        private Long lastDropped;
        private String extra = "";
        private final List<Call> calls = new ArrayList<>();

        private Dump(int rank, int worldSize, long dumpedAtMillis) {
            this.rank = rank;
            this.worldSize = worldSize;
            this.epochMillis = ORIGIN + dumpedAtMillis;
            // Unrelated per process, as System.nanoTime is.
            this.nanoTime = 987_654_321_000L + rank * 7_777_777_777_777L;
        }

        Dump job(String id, String by) {
            jobId = id;
            owner = by;
            return this;
        }

        Dump reason(String why) {
            reason = why;
            return this;
        }

        /** The ring dropped {@code count} calls, the newest of them {@code lastSequence}. */
        Dump dropped(long count, long lastSequence) {
            dropped = count;
            lastDropped = lastSequence;
            return this;
        }

        /** Further top-level fields, as raw JSON members (a later writer's additions). */
        Dump extra(String members) {
            extra = members + ", ";
            return this;
        }

        /** Adds a call and returns it, for its details. */
        Call call(long sequence, String operation) {
            Call call = new Call(sequence, operation);
            calls.add(call);
            return call;
        }

        /** Adds completed calls {@code first..last}, allReduce, each 10 ms long, starting at {@code startMillis}. */
        Dump completed(long first, long last, long startMillis) {
            for (long sequence = first; sequence <= last; sequence++) {
                long start = startMillis + (sequence - first) * 20;
                call(sequence, "allReduce").ran(start, start + 10);
            }
            return this;
        }

        /** The writer's file name for this dump. */
        String fileName() {
            return "ringstar-" + jobId.replaceAll("[^A-Za-z0-9._-]", "_") + "-rank" + rank + ".json";
        }

        /** Writes the dump into {@code dir} under the writer's file name and returns the file. */
        Path writeTo(Path dir) {
            return writeTo(dir, fileName());
        }

        Path writeTo(Path dir, String name) {
            try {
                return Files.writeString(dir.resolve(name), json(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        long nanos(double wallMillis) {
            return nanoTime + Math.round((ORIGIN + wallMillis - epochMillis) * 1e6);
        }

        String json() {
            List<String> entries = new ArrayList<>();
            for (Call call : calls) {
                entries.add(call.json(this));
            }
            return "{\n  \"format\": \"ringstar-trace\",\n  \"version\": 1,\n  \"jobId\": " + quoted(jobId)
                    + ",\n  \"owner\": \"" + owner + "\",\n  \"rank\": " + rank + ",\n  \"worldSize\": " + worldSize
                    + ",\n  \"host\": \"box-" + rank + "\",\n  \"pid\": " + (100 + rank) + ",\n  \"reason\": "
                    + quoted(reason) + ",\n  " + extra + "\"clock\": {\"epochMillis\": " + epochMillis
                    + ", \"nanoTime\": " + nanoTime + "},\n  \"timeoutNanos\": 5000000000,\n  \"traceEntries\": 2000,\n"
                    + "  \"recorded\": " + (calls.size() + dropped) + ",\n  \"dropped\": " + dropped
                    + ",\n  \"lastDroppedSequence\": " + lastDropped + ",\n  \"entries\": [\n    "
                    + String.join(",\n    ", entries) + "\n  ]\n}\n";
        }
    }

    /** One call of a dump; by default a completed ring call on FLOAT 10, two tensors, that ran 0..0 ms. */
    static final class Call {
        private final long sequence;
        private final String operation;
        private Integer root;
        private String elements = "{\"FLOAT\": 10}";
        private int tensors = 2;
        private String state = "completed";
        private Double issued;
        private Double started = 0.0;
        private Double ended = 0.0;
        private Integer waitingOn;
        private String error;

        private Call(long sequence, String operation) {
            this.sequence = sequence;
            this.operation = operation;
        }

        /** Completed: started at {@code start}, ended at {@code end} (wall-clock ms since the origin). */
        Call ran(double start, double end) {
            started = start;
            ended = end;
            state = "completed";
            return this;
        }

        /** Failed at {@code end} waiting on {@code peer} (null for none) with {@code failure}. */
        Call failed(double start, double end, Integer peer, String failure) {
            started = start;
            ended = end;
            state = "failed";
            waitingOn = peer;
            error = failure;
            return this;
        }

        /** Still running at the dump, waiting on {@code peer} (null for none). */
        Call running(double start, Integer peer) {
            started = start;
            ended = null;
            state = "started";
            waitingOn = peer;
            return this;
        }

        /** Issued at {@code at}, not yet started. */
        Call queued(double at) {
            issued = at;
            started = null;
            ended = null;
            state = "issued";
            return this;
        }

        /** Issued at {@code at}, before it started. */
        Call issuedAt(double at) {
            issued = at;
            return this;
        }

        Call data(String elementsJson, int tensorCount) {
            elements = elementsJson;
            tensors = tensorCount;
            return this;
        }

        Call root(int rank) {
            root = rank;
            return this;
        }

        String json(Dump dump) {
            long startedNanos = started == null ? 0 : dump.nanos(started);
            long issuedNanos = issued != null ? dump.nanos(issued) : startedNanos;
            long endedNanos = ended == null ? 0 : dump.nanos(ended);
            return String.format(Locale.ROOT, "{\"sequence\": %d, \"operation\": %s, \"algorithm\": \"ring\", "
                    + "\"root\": %s, \"elements\": %s, \"tensors\": %d, \"bytes\": %d, \"state\": \"%s\", "
                    + "\"issuedNanos\": %d, \"startedNanos\": %d, \"endedNanos\": %d, \"waitNanos\": 12000, "
                    + "\"waitingOn\": %s, \"error\": %s}", sequence, quoted(operation), root, elements, tensors,
                    40L * tensors, state, issuedNanos, startedNanos, endedNanos, waitingOn, quoted(error));
        }
    }

    static String quoted(String text) {
        return text == null ? "null" : "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
