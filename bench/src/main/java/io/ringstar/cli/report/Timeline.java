package io.ringstar.cli.report;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.ringstar.cli.report.TraceDump.Entry;
import io.ringstar.cli.report.TraceDump.State;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The trace dumps of a job's ranks as one Chrome trace (the Trace Event Format's JSON object form,
 * which Perfetto and chrome://tracing open): a process per rank (pid = rank), a thread per owner of
 * calls (communicator, aggregator, async server), a complete event ({@code "ph": "X"}) per call from
 * its start to its end, and an instant per dump.
 *
 * <p>All times are on one axis, the wall clock (each dump's {@code epochMillis} and {@code nanoTime}
 * were read at one instant), in microseconds since the earliest event across ranks; the skew between
 * hosts' clocks is unknown and stays in. A call still running at its rank's dump ends at the dump
 * and says so in its args; a call issued but not started is an instant at its issue. Calls of one
 * thread that overlap (non-blocking calls in flight together) go to further threads of the rank, since
 * the viewers nest the slices of a thread and would misdraw overlapping ones.
 */
final class Timeline {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();
    private static final String IN_PROGRESS = "still running at the rank's dump; the slice ends at the dump";

    /** One event: when it begins on the wall clock (nanoseconds since the epoch), for the ordering, and its JSON. */
    private record Event(long wallNanos, JsonObject json) {
    }

    /** A call as a slice on the wall clock, before it is given a thread. */
    private record Slice(long start, long end, Entry entry) {
    }

    private Timeline() {
    }

    /** The trace of {@code dumps}, as the text of a JSON file. */
    static String render(TraceDumps dumps) {
        boolean severalJobs = dumps.jobs().stream().map(TraceDumps.Job::jobId).distinct().count() > 1;
        Map<Integer, List<TraceDump>> byRank = new TreeMap<>();
        for (TraceDump dump : dumps.all()) {
            byRank.computeIfAbsent(dump.rank(), rank -> new ArrayList<>()).add(dump);
        }
        long zero = dumps.all().stream().mapToLong(Timeline::earliest).min().orElse(0);
        List<JsonObject> metadata = new ArrayList<>();
        List<Event> events = new ArrayList<>();
        for (Map.Entry<Integer, List<TraceDump>> rank : byRank.entrySet()) {
            int pid = rank.getKey();
            TraceDump any = rank.getValue().get(0);
            metadata.add(metadata("process_name", pid, 0, "name", "rank " + pid + " (" + (any.host() == null
                    ? "unknown host" : any.host()) + ", pid " + (any.pid() == null ? "?" : any.pid()) + ")"));
            metadata.add(metadata("process_sort_index", pid, 0, "sort_index", pid));
            int nextTid = 0;
            for (TraceDump dump : rank.getValue()) {
                String thread = severalJobs ? dump.jobId() + " " + dump.owner() : dump.owner();
                List<List<Slice>> lanes = lanes(dump);
                for (int lane = 0; lane < Math.max(1, lanes.size()); lane++) {
                    int tid = nextTid + lane;
                    metadata.add(metadata("thread_name", pid, tid, "name",
                            lane == 0 ? thread : thread + " (overlapping calls " + (lane + 1) + ")"));
                    metadata.add(metadata("thread_sort_index", pid, tid, "sort_index", tid));
                }
                for (int lane = 0; lane < lanes.size(); lane++) {
                    for (Slice slice : lanes.get(lane)) {
                        events.add(complete(dump, slice, pid, nextTid + lane, zero));
                    }
                }
                for (Entry entry : dump.entries()) {
                    if (entry.state() == State.ISSUED) {
                        events.add(issued(dump, entry, pid, nextTid, zero));
                    }
                }
                events.add(dumped(dump, pid, nextTid, zero));
                nextTid += Math.max(1, lanes.size());
            }
        }
        events.sort(Comparator.comparingLong(Event::wallNanos)
                .thenComparingInt(event -> event.json().get("pid").getAsInt())
                .thenComparingInt(event -> event.json().get("tid").getAsInt()));
        List<String> lines = new ArrayList<>();
        metadata.forEach(json -> lines.add(GSON.toJson(json)));
        events.forEach(event -> lines.add(GSON.toJson(event.json())));
        JsonObject other = new JsonObject();
        other.addProperty("source", "ringstar report timeline");
        other.addProperty("zero", Instant.ofEpochSecond(0, zero).toString());
        other.addProperty("clock", "each rank's wall clock at its dump; the skew between hosts is unknown");
        return "{\"traceEvents\": [\n" + String.join(",\n", lines) + "\n],\n\"displayTimeUnit\": \"ms\",\n"
                + "\"otherData\": " + GSON.toJson(other) + "}\n";
    }

    /** The wall-clock time of a call's first event: its start, or its issue when it has not started. */
    private static long begins(TraceDump dump, Entry entry) {
        // A call that never recorded its start (startedNanos 0) began at its issue at the latest.
        long nanos = entry.startedNanos() != 0 ? entry.startedNanos() : entry.issuedNanos();
        return nanos != 0 ? dump.wallNanos(nanos) : dump.dumpWallNanos();
    }

    /** The wall-clock time of the dump's first event. */
    private static long earliest(TraceDump dump) {
        return dump.entries().stream().mapToLong(entry -> begins(dump, entry)).min().orElse(dump.dumpWallNanos());
    }

    /**
     * The dump's started, completed and failed calls as slices, in threads ("lanes") within which
     * no two overlap: the first lane that is free at a slice's start takes it.
     */
    private static List<List<Slice>> lanes(TraceDump dump) {
        List<Slice> slices = new ArrayList<>();
        for (Entry entry : dump.entries()) {
            if (entry.state() == State.ISSUED) {
                continue;
            }
            long start = begins(dump, entry);
            long end = entry.state() == State.STARTED || entry.endedNanos() == 0 ? dump.dumpWallNanos()
                    : dump.wallNanos(entry.endedNanos());
            slices.add(new Slice(start, Math.max(start, end), entry));
        }
        slices.sort(Comparator.comparingLong(Slice::start));
        List<List<Slice>> lanes = new ArrayList<>();
        List<Long> free = new ArrayList<>();
        for (Slice slice : slices) {
            int lane = 0;
            while (lane < lanes.size() && free.get(lane) > slice.start()) {
                lane++;
            }
            if (lane == lanes.size()) {
                lanes.add(new ArrayList<>());
                free.add(0L);
            }
            lanes.get(lane).add(slice);
            free.set(lane, slice.end());
        }
        return lanes;
    }

    private static Event complete(TraceDump dump, Slice slice, int pid, int tid, long zero) {
        Entry entry = slice.entry();
        JsonObject json = event(entry.operation(), dump.owner(), "X", slice.start() - zero, pid, tid);
        json.add("dur", micros(slice.end() - slice.start()));
        JsonObject args = args(entry);
        if (entry.state() == State.STARTED) {
            args.addProperty("inProgress", IN_PROGRESS);
        }
        if (entry.startedNanos() != 0 && entry.issuedNanos() != 0 && entry.startedNanos() > entry.issuedNanos()) {
            args.add("queuedMicros", micros(entry.startedNanos() - entry.issuedNanos()));
        }
        json.add("args", args);
        return new Event(slice.start(), json);
    }

    private static Event issued(TraceDump dump, Entry entry, int pid, int tid, long zero) {
        long at = begins(dump, entry);
        JsonObject json = event(entry.operation() + " (issued)", dump.owner(), "i", at - zero, pid, tid);
        json.addProperty("s", "t");
        JsonObject args = args(entry);
        args.addProperty("inProgress", "issued, not started at the rank's dump");
        json.add("args", args);
        return new Event(at, json);
    }

    private static Event dumped(TraceDump dump, int pid, int tid, long zero) {
        JsonObject json = event("dump", dump.owner(), "i", dump.dumpWallNanos() - zero, pid, tid);
        json.addProperty("s", "p");
        JsonObject args = new JsonObject();
        args.addProperty("file", dump.file());
        args.addProperty("reason", dump.reason());
        args.addProperty("dropped", dump.dropped());
        json.add("args", args);
        return new Event(dump.dumpWallNanos(), json);
    }

    private static JsonObject event(String name, String category, String phase, long sinceZero, int pid, int tid) {
        JsonObject json = new JsonObject();
        json.addProperty("name", name);
        json.addProperty("cat", category);
        json.addProperty("ph", phase);
        json.add("ts", micros(sinceZero));
        json.addProperty("pid", pid);
        json.addProperty("tid", tid);
        return json;
    }

    private static JsonObject args(Entry entry) {
        JsonObject args = new JsonObject();
        args.addProperty("sequence", entry.sequence());
        args.addProperty("algorithm", entry.algorithm());
        args.addProperty("root", entry.root());
        args.addProperty("bytes", entry.bytes());
        JsonObject elements = new JsonObject();
        entry.elements().forEach(elements::addProperty);
        args.add("elements", elements);
        args.addProperty("tensors", entry.tensors());
        args.addProperty("waitNanos", entry.waitNanos());
        args.addProperty("waitingOn", entry.waitingOn());
        args.addProperty("state", entry.state().wireName());
        args.addProperty("error", entry.error());
        return args;
    }

    /** A metadata event ({@code "ph": "M"}): a process's or thread's name or place in the list. */
    private static JsonObject metadata(String name, int pid, int tid, String key, Object value) {
        JsonObject json = new JsonObject();
        json.addProperty("name", name);
        json.addProperty("ph", "M");
        json.addProperty("pid", pid);
        json.addProperty("tid", tid);
        JsonObject args = new JsonObject();
        if (value instanceof Number number) {
            args.addProperty(key, number);
        } else {
            args.addProperty(key, String.valueOf(value));
        }
        json.add("args", args);
        return json;
    }

    /** Nanoseconds as microseconds with three decimals, exactly ("1234.567", never "1.234567E3"). */
    private static JsonPrimitive micros(long nanos) {
        return new JsonPrimitive(BigDecimal.valueOf(nanos, 3));
    }
}
