package io.ringstar.cli.report;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One rank's trace dump as {@link TraceDumps} read it (format {@value TraceDumps#FORMAT}, version
 * {@value TraceDumps#VERSION}): the last calls of one owner (communicator, aggregator or async server)
 * of one rank, oldest first. Every {@code *Nanos} time is on the dumping process's nanoTime clock;
 * {@link #wallNanos} puts it on the wall clock, the only axis that two processes share.
 *
 * @param file the file's name in its directory
 * @param host the host that wrote it, or null when the dump does not say
 * @param pid the writing process's id, or null
 * @param reason why the rank dumped ({@code failure: ...}, {@code request}, ...), or null
 * @param epochMillis the wall clock at the dump, read at the same instant as {@code nanoTime}
 * @param nanoTime the nanoTime clock at the dump
 * @param dropped how many older calls the rank's ring dropped before this dump
 * @param lastDroppedSequence the newest dropped call's sequence, or null when none was dropped
 */
record TraceDump(String file, String jobId, String owner, int rank, int worldSize, String host, Long pid,
        String reason, long epochMillis, long nanoTime, long dropped, Long lastDroppedSequence, List<Entry> entries) {

    /** A call's state at the dump. */
    enum State {
        /** A non-blocking call queued, not yet started. */
        ISSUED,
        /** Running at the dump (the rank is, or was when it dumped, in this call). */
        STARTED,
        COMPLETED,
        FAILED;

        /** The name the format writes. */
        String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One call.
     *
     * @param algorithm the algorithm's name, or null
     * @param root the root rank, or null
     * @param elements per ND4J data type, the element count of the call's tensors (empty for a barrier)
     * @param tensors how many tensors, or null when the dump does not say
     * @param bytes the call's bytes, or null
     * @param endedNanos 0 until the call completed or failed
     * @param startedNanos 0 while the call is only issued
     * @param waitNanos how long the call waited for peers so far, or null
     * @param waitingOn the peer a started or failed call was waiting for, or null
     * @param error {@code <exception simple class name>: <message>} of a failed call, or null
     */
    record Entry(long sequence, String operation, String algorithm, Integer root, Map<String, Long> elements,
            Integer tensors, Long bytes, State state, long issuedNanos, long startedNanos, long endedNanos,
            Long waitNanos, Integer waitingOn, String error) {
        Entry {
            elements = Collections.unmodifiableMap(new LinkedHashMap<>(elements));
        }

        /** What the ranks of a job must agree on for one sequence number: operation, root, element counts, tensors. */
        String signature() {
            return operation + " " + describe();
        }

        /** The call's arguments in short, as in {@code (root 0, FLOAT 10, 2 tensors)}; empty when there are none. */
        String describe() {
            List<String> parts = new ArrayList<>();
            if (root != null) {
                parts.add("root " + root);
            }
            elements.forEach((type, count) -> parts.add(type + " " + count));
            // A barrier's no tensors go without saying; any other count but one is worth a mention.
            if (tensors != null && tensors != 1 && !(tensors == 0 && elements.isEmpty())) {
                parts.add(tensors + " tensors");
            }
            return parts.isEmpty() ? "" : "(" + String.join(", ", parts) + ")";
        }
    }

    TraceDump {
        entries = List.copyOf(entries);
    }

    /**
     * The wall-clock time, in nanoseconds since the epoch, of an instant on this dump's nanoTime clock.
     * Exact in a long: the wall clock's milliseconds since 1970 times 10^6 stay far below 2^63.
     */
    long wallNanos(long nanos) {
        return epochMillis * 1_000_000L + (nanos - nanoTime);
    }

    /** The dump's own wall-clock time in nanoseconds since the epoch. */
    long dumpWallNanos() {
        return epochMillis * 1_000_000L;
    }

    /**
     * The oldest sequence number this dump can speak for: its first entry's, or, when the ring kept
     * none, the one after the newest dropped.
     */
    long firstKept() {
        if (!entries.isEmpty()) {
            return entries.get(0).sequence();
        }
        return lastDroppedSequence == null ? 1 : lastDroppedSequence + 1;
    }

    /** The newest sequence number recorded, or {@code firstKept() - 1} when none is. */
    long lastRecorded() {
        return entries.isEmpty() ? firstKept() - 1 : entries.get(entries.size() - 1).sequence();
    }
}
