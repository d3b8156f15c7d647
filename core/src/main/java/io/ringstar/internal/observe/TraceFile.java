package io.ringstar.internal.observe;

import io.ringstar.internal.tensor.TensorLayout;
import io.ringstar.observe.TraceFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a flight recorder's entries as one self-describing JSON file, format
 * {@value TraceFiles#FORMAT} version {@value TraceFiles#VERSION}, which {@code ringstar report hang}
 * and {@code report timeline} read.
 * The README ("When a job stalls") documents every field. Written to a temporary file and moved
 * into place, so a reader never sees half a dump; a later dump of the same rank and job replaces
 * it. {@code owner} names what made the calls: {@code aggregator}, {@code communicator},
 * {@code async-server}, joined with {@code +} when several shared the rank's transport. No JSON
 * library: core has none, and the format is a handful of numbers and strings.
 */
final class TraceFile {
    /** Who wrote it: the dump's header fields. */
    record Header(String jobId, String owner, int rank, int worldSize, String host, long pid, String reason,
            long epochMillis, long nanoTime, long timeoutNanos, int traceEntries) {
    }

    private TraceFile() {
    }

    /** The file a rank's dump goes to in {@code dir}: {@code ringstar-<job>-rank<R>.json}. */
    static Path path(Path dir, String jobId, int rank) {
        return dir.resolve(TraceFiles.fileName(jobId, rank));
    }

    /** Writes the dump into {@code dir} (made if missing) and returns its path. */
    static Path write(Path dir, Header header, FlightRecorder.Snapshot snapshot) {
        Path target = path(dir, header.jobId(), header.rank());
        String json = render(header, snapshot);
        try {
            Files.createDirectories(dir);
            Path temporary = Files.createTempFile(dir, ".ringstar-trace-", ".tmp");
            try {
                Files.writeString(temporary, json, StandardCharsets.UTF_8);
                try {
                    Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(temporary);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("rank " + header.rank() + " could not write its trace to " + target, e);
        }
        return target;
    }

    static String render(Header header, FlightRecorder.Snapshot snapshot) {
        StringBuilder out = new StringBuilder(256 + 320 * snapshot.entries().size());
        out.append("{\n  \"format\": ").append(quote(TraceFiles.FORMAT));
        out.append(",\n  \"version\": ").append(TraceFiles.VERSION);
        out.append(",\n  \"jobId\": ").append(quote(header.jobId()));
        out.append(",\n  \"owner\": ").append(quote(header.owner()));
        out.append(",\n  \"rank\": ").append(header.rank());
        out.append(",\n  \"worldSize\": ").append(header.worldSize());
        out.append(",\n  \"host\": ").append(quote(header.host()));
        out.append(",\n  \"pid\": ").append(header.pid());
        out.append(",\n  \"reason\": ").append(quote(header.reason()));
        out.append(",\n  \"clock\": {\"epochMillis\": ").append(header.epochMillis()).append(", \"nanoTime\": ")
                .append(header.nanoTime()).append('}');
        out.append(",\n  \"timeoutNanos\": ").append(header.timeoutNanos());
        out.append(",\n  \"traceEntries\": ").append(header.traceEntries());
        out.append(",\n  \"recorded\": ").append(snapshot.recorded());
        out.append(",\n  \"dropped\": ").append(snapshot.dropped());
        out.append(",\n  \"lastDroppedSequence\": ").append(orNull(snapshot.lastDroppedSequence()));
        out.append(",\n  \"entries\": [");
        String separator = "\n";
        for (FlightRecorder.Entry entry : snapshot.entries()) {
            out.append(separator);
            separator = ",\n";
            entry(out, entry);
        }
        out.append(snapshot.entries().isEmpty() ? "]\n}\n" : "\n  ]\n}\n");
        return out.toString();
    }

    private static void entry(StringBuilder out, FlightRecorder.Entry entry) {
        out.append("    {\"sequence\": ").append(entry.sequence());
        out.append(", \"operation\": ").append(quote(entry.operation()));
        out.append(", \"algorithm\": ").append(quote(entry.algorithm()));
        out.append(", \"root\": ").append(orNull(entry.root()));
        out.append(", \"elements\": {");
        String separator = "";
        for (Map.Entry<String, Long> count : elements(entry.layout()).entrySet()) {
            out.append(separator).append(quote(count.getKey())).append(": ").append(count.getValue());
            separator = ", ";
        }
        out.append("}, \"tensors\": ").append(entry.layout() == null ? 0 : entry.layout().tensorCount());
        out.append(", \"bytes\": ").append(entry.bytes());
        out.append(", \"state\": ").append(quote(entry.state().label()));
        out.append(", \"issuedNanos\": ").append(entry.issuedNanos());
        out.append(", \"startedNanos\": ").append(entry.startedNanos());
        out.append(", \"endedNanos\": ").append(entry.endedNanos());
        out.append(", \"waitNanos\": ").append(entry.waitNanos());
        out.append(", \"waitingOn\": ").append(orNull(entry.waitingOn()));
        out.append(", \"error\": ").append(entry.error() == null ? "null" : quote(entry.error()));
        out.append('}');
    }

    /** Per element type (ND4J's names) the element count of {@code layout}'s tensors, in name order. */
    static Map<String, Long> elements(TensorLayout layout) {
        Map<String, Long> counts = new TreeMap<>();
        if (layout != null) {
            for (TensorLayout.Group group : layout.groups()) {
                counts.merge(group.type().dataType().name(), group.elementCount(), Long::sum);
            }
        }
        return counts;
    }

    private static String orNull(long value) {
        return value < 0 ? "null" : Long.toString(value);
    }

    static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
