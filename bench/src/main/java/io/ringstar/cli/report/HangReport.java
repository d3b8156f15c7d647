package io.ringstar.cli.report;

import io.ringstar.cli.report.TraceDump.Entry;
import io.ringstar.cli.report.TraceDump.State;
import io.ringstar.cli.report.TraceDumps.Job;
import io.ringstar.cli.report.TraceDumps.Skipped;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the ranks of a job diverge, from their trace dumps: a few lines per job and owner. The ranks
 * of a job make the same calls with the same sequence numbers, so the first sequence number that not
 * every dumped rank completed is where they parted: the ranks that reached it waited there (or
 * failed), the ranks that never reached it were elsewhere, and the ranks without a dump are named
 * apart. Calls that disagree between ranks at one sequence number are named with both sides, since a
 * rank that called something else is the usual reason for the others' wait.
 *
 * <p>Comparison begins at the oldest sequence number that every dump still holds: a ring that
 * wrapped dropped the older calls of its rank, and a call one rank no longer has cannot be compared.
 * Times are compared on the wall clock, the only clock that the ranks' processes share; the skew of
 * different hosts' clocks is unknown and goes into every difference.
 */
final class HangReport {
    /** Past these, further sequence numbers where calls disagree are only counted: one cause repeats. */
    private static final int SHOWN_MISMATCHES = 5;
    private static final int ERROR_CHARS = 120;
    private static final long NANOS_PER_MILLI = 1_000_000L;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private HangReport() {
    }

    /** The report of every job in {@code dumps}, jobs apart by a blank line. */
    static String render(TraceDumps dumps) {
        List<String> sections = new ArrayList<>();
        for (Job job : dumps.jobs()) {
            sections.add(String.join("\n", section(job, dumps.skipped())) + "\n");
        }
        return String.join("\n", sections);
    }

    private static List<String> section(Job job, List<Skipped> skipped) {
        List<String> lines = new ArrayList<>();
        List<TraceDump> dumps = job.dumps();
        String header = "job " + job.jobId() + " (" + job.owner() + "), " + job.worldSize()
                + (job.worldSize() == 1 ? " rank" : " ranks") + ", dumps from "
                + ranks(job.byRank().keySet());
        if (job.worldSizes().size() > 1) {
            header += " (their world sizes disagree: " + list(job.worldSizes()) + ")";
        }
        lines.add(header);
        long first = dumps.stream().mapToLong(TraceDump::firstKept).max().orElseThrow();
        long last = dumps.stream().mapToLong(TraceDump::lastRecorded).max().orElseThrow();
        List<Integer> dropping = dumps.stream().filter(dump -> dump.firstKept() > 1).map(TraceDump::rank).toList();
        if (first > 1 && !dropping.isEmpty()) {
            lines.add("compared from #" + first + ", the oldest call that every dump holds (" + ranks(dropping)
                    + " dropped older ones)");
        }
        List<Integer> missing = new ArrayList<>();
        for (int rank = 0; rank < job.worldSize(); rank++) {
            if (!job.byRank().containsKey(rank)) {
                missing.add(rank);
            }
        }
        if (last < first) {
            lines.add("no call recorded" + (missing.isEmpty() ? "" : "; " + missingClause(job, missing, skipped)));
        } else {
            long diverged = divergence(dumps, first);
            if (diverged < 0) {
                lines.add((missing.isEmpty() ? "every rank" : "every rank with a dump") + " completed every call, #"
                        + first + " to #" + last
                        + (missing.isEmpty() ? "" : "; " + missingClause(job, missing, skipped)));
            } else {
                lines.add(divergenceLine(job, dumps, diverged, missing, skipped));
            }
            lines.addAll(mismatches(dumps, first));
        }
        lines.addAll(errors(dumps));
        return lines;
    }

    /**
     * The sequence numbers from {@code first} on that some dump recorded, in order: the numbers to
     * compare, whatever gaps a damaged dump may have between them.
     */
    private static TreeSet<Long> recorded(List<TraceDump> dumps, long first) {
        TreeSet<Long> sequences = new TreeSet<>();
        for (TraceDump dump : dumps) {
            for (Entry entry : dump.entries()) {
                if (entry.sequence() >= first) {
                    sequences.add(entry.sequence());
                }
            }
        }
        return sequences;
    }

    /** The first sequence number from {@code first} on that some dumped rank did not complete, or -1. */
    private static long divergence(List<TraceDump> dumps, long first) {
        for (long sequence : recorded(dumps, first)) {
            for (TraceDump dump : dumps) {
                Entry entry = at(dump, sequence);
                if (entry == null || entry.state() != State.COMPLETED) {
                    return sequence;
                }
            }
        }
        return -1;
    }

    private static String divergenceLine(Job job, List<TraceDump> dumps, long sequence, List<Integer> missing,
            List<Skipped> skipped) {
        Map<String, List<Integer>> waiting = new LinkedHashMap<>();
        List<Integer> waitingRanks = new ArrayList<>();
        Map<String, List<Integer>> completed = new LinkedHashMap<>();
        List<TraceDump> reached = new ArrayList<>();
        List<String> behind = new ArrayList<>();
        List<Integer> gaps = new ArrayList<>();
        for (TraceDump dump : dumps) {
            Entry entry = at(dump, sequence);
            if (entry == null) {
                continue;
            }
            reached.add(dump);
            if (entry.state() == State.COMPLETED) {
                completed.computeIfAbsent(afterwards(dump, sequence), after -> new ArrayList<>()).add(dump.rank());
            } else {
                waitingRanks.add(dump.rank());
                waiting.computeIfAbsent(waitingDetail(entry), detail -> new ArrayList<>()).add(dump.rank());
            }
        }
        for (TraceDump dump : dumps) {
            if (at(dump, sequence) != null) {
                continue;
            }
            if (dump.lastRecorded() > sequence) {
                gaps.add(dump.rank());
            } else {
                behind.add(behindClause(dump, sequence, reached));
            }
        }
        List<String> clauses = new ArrayList<>();
        if (!waitingRanks.isEmpty()) {
            List<String> details = new ArrayList<>();
            waiting.forEach((detail, ranks) -> details.add(
                    waiting.size() == 1 ? detail : list(ranks) + ": " + detail));
            clauses.add(ranks(waitingRanks) + " waiting (" + String.join("; ", details) + ")");
        }
        completed.forEach((after, ranks) -> clauses.add(ranks(ranks) + " completed it" + after));
        clauses.addAll(behind);
        if (!gaps.isEmpty()) {
            clauses.add(ranks(gaps) + (gaps.size() == 1 ? " has" : " have") + " no record of it, but of later calls");
        }
        if (!missing.isEmpty()) {
            clauses.add(missingClause(job, missing, skipped));
        }
        String operation = operationAt(dumps, sequence);
        return (operation == null ? "" : operation + " ") + "#" + sequence + ": " + String.join("; ", clauses);
    }

    /**
     * Where a rank that completed call {@code sequence} went next: the first later call it did not
     * complete, with how it waits there, or how far it completed calls.
     */
    private static String afterwards(TraceDump dump, long sequence) {
        for (Entry entry : dump.entries()) {
            if (entry.sequence() > sequence && entry.state() != State.COMPLETED) {
                return ", then #" + entry.sequence() + " " + entry.operation() + " (" + waitingDetail(entry) + ")";
            }
        }
        return dump.lastRecorded() > sequence ? " and every later call it recorded, up to #" + dump.lastRecorded()
                : "";
    }

    /** How a rank that started, was issued or failed a call waits in it: its error's class and the peer it names. */
    private static String waitingDetail(Entry entry) {
        String peer = entry.waitingOn() == null ? "" : "waiting on rank " + entry.waitingOn();
        return switch (entry.state()) {
            case FAILED -> shortError(entry.error()) + (peer.isEmpty() ? "" : ", " + peer);
            case ISSUED -> "issued, not started";
            default -> peer.isEmpty() ? "in it" : peer;
        };
    }

    /**
     * A rank that never reached the call: where it was instead (a call it had not completed), its last
     * completed call, and how long that ended before the diverging call ended on the ranks that reached it.
     */
    private static String behindClause(TraceDump dump, long sequence, List<TraceDump> reached) {
        StringBuilder clause = new StringBuilder("rank " + dump.rank() + " never started it");
        Entry latest = dump.entries().isEmpty() ? null : dump.entries().get(dump.entries().size() - 1);
        if (latest != null && latest.state() != State.COMPLETED) {
            clause.append("; it was ").append(switch (latest.state()) {
                case FAILED -> "failed in #" + latest.sequence() + " " + latest.operation() + " ("
                        + shortError(latest.error()) + ")";
                case ISSUED -> "yet to start #" + latest.sequence() + " " + latest.operation();
                default -> "in #" + latest.sequence() + " " + latest.operation()
                        + (latest.waitingOn() == null ? "" : " waiting on rank " + latest.waitingOn());
            }).append(" at its dump");
        }
        Entry done = null;
        for (Entry entry : dump.entries()) {
            if (entry.state() == State.COMPLETED) {
                done = entry;
            }
        }
        if (done == null) {
            clause.append(dump.dropped() > 0 ? "; its dump holds no completed call" : "; it completed no call");
            return clause.toString();
        }
        clause.append("; its last completed call was #").append(done.sequence()).append(' ').append(done.operation());
        if (!reached.isEmpty()) {
            clause.append(", ").append(before(dump.wallNanos(done.endedNanos()), reached, sequence));
        }
        return clause.toString();
    }

    /**
     * How long before the ends of call {@code sequence} on {@code reached} the instant {@code wall} is:
     * a failed or completed call ends when it ended, a call still in progress at its rank's dump.
     */
    private static String before(long wall, List<TraceDump> reached, long sequence) {
        long least = Long.MAX_VALUE;
        long most = Long.MIN_VALUE;
        Set<String> kinds = new TreeSet<>();
        for (TraceDump dump : reached) {
            Entry entry = at(dump, sequence);
            long end = switch (entry.state()) {
                case COMPLETED, FAILED -> dump.wallNanos(entry.endedNanos());
                default -> dump.dumpWallNanos();
            };
            least = Math.min(least, end - wall);
            most = Math.max(most, end - wall);
            kinds.add(switch (entry.state()) {
                case COMPLETED -> "completion";
                case FAILED -> shortError(entry.error()).contains("Timeout") ? "timeout" : "failure";
                default -> "dump";
            });
        }
        if (kinds.contains("timeout") && kinds.contains("failure")) {
            kinds.remove("timeout");
        }
        String plural = reached.size() == 1 ? "" : "s";
        String whose = (reached.size() == 1 ? "rank " + reached.get(0).rank() + "'s " : "the others' ")
                + String.join(" and ", kinds.stream().map(kind -> kind + plural).toList());
        if (least >= 0) {
            return span(least, most) + " before " + whose;
        }
        if (most <= 0) {
            return span(-most, -least) + " after " + whose;
        }
        return "from " + duration(-least) + " after to " + duration(most) + " before " + whose;
    }

    private static String span(long least, long most) {
        String low = duration(least);
        String high = duration(most);
        if (low.equals(high)) {
            return low;
        }
        // "4.9 s to 5.3 s" reads as "4.9 to 5.3 s" when both have the same unit.
        String unit = low.substring(low.indexOf(' '));
        return high.endsWith(unit) ? low.substring(0, low.indexOf(' ')) + " to " + high : low + " to " + high;
    }

    /** The ranks without a dump, and which of them left a dump that could not be read. */
    private static String missingClause(Job job, List<Integer> missing, List<Skipped> skipped) {
        List<Integer> none = new ArrayList<>();
        List<String> clauses = new ArrayList<>();
        for (int rank : missing) {
            final int r = rank;
            List<String> files = skipped.stream().filter(file -> job.names(file.file(), r)).map(Skipped::file)
                    .toList();
            if (files.isEmpty()) {
                none.add(rank);
            } else {
                clauses.add("rank " + rank + "'s dump is unreadable (" + String.join(", ", files) + ")");
            }
        }
        if (!none.isEmpty()) {
            clauses.add(0, ranks(none) + (none.size() == 1 ? " has" : " have")
                    + " no dump (crashed, stopped, or never failed)");
        }
        return String.join("; ", clauses);
    }

    /**
     * At each sequence number from {@code first} that several ranks recorded, the ranks whose call
     * differs from the most ranks' (operation, root, element counts or tensors), with both calls.
     */
    private static List<String> mismatches(List<TraceDump> dumps, long first) {
        List<String> lines = new ArrayList<>();
        int more = 0;
        long lastMore = 0;
        for (long sequence : recorded(dumps, first)) {
            Map<String, List<Integer>> bySignature = new LinkedHashMap<>();
            Map<String, Entry> calls = new LinkedHashMap<>();
            for (TraceDump dump : dumps) {
                Entry entry = at(dump, sequence);
                if (entry != null) {
                    bySignature.computeIfAbsent(entry.signature(), signature -> new ArrayList<>()).add(dump.rank());
                    calls.putIfAbsent(entry.signature(), entry);
                }
            }
            if (bySignature.size() < 2) {
                continue;
            }
            if (lines.size() >= SHOWN_MISMATCHES) {
                more++;
                lastMore = sequence;
                continue;
            }
            String most = null;
            for (Map.Entry<String, List<Integer>> group : bySignature.entrySet()) {
                if (most == null || group.getValue().size() > bySignature.get(most).size()) {
                    most = group.getKey();
                }
            }
            List<String> others = new ArrayList<>();
            for (Map.Entry<String, List<Integer>> group : bySignature.entrySet()) {
                if (!group.getKey().equals(most)) {
                    others.add(ranks(group.getValue()) + " called " + call(calls.get(group.getKey())));
                }
            }
            lines.add("#" + sequence + ": " + String.join(", ", others) + " where " + ranks(bySignature.get(most))
                    + " called " + call(calls.get(most)));
        }
        if (more > 0) {
            lines.add("... and the calls differ at " + more + " more sequence numbers, up to #" + lastMore);
        }
        return lines;
    }

    /**
     * Each rank's first failed call with its error in short; ranks whose first failure is the same call
     * with the same exception share a line (with the lowest rank's message), so a job of many ranks
     * that all timed out is one line, not one per rank.
     */
    private static List<String> errors(List<TraceDump> dumps) {
        Map<String, List<TraceDump>> byFailure = new LinkedHashMap<>();
        Map<String, Entry> firstFailure = new LinkedHashMap<>();
        List<Integer> failingLater = new ArrayList<>();
        for (TraceDump dump : dumps) {
            List<Entry> failed = dump.entries().stream().filter(entry -> entry.state() == State.FAILED).toList();
            if (failed.isEmpty()) {
                continue;
            }
            Entry entry = failed.get(0);
            String key = entry.sequence() + " " + entry.operation() + " " + shortError(entry.error());
            byFailure.computeIfAbsent(key, k -> new ArrayList<>()).add(dump);
            firstFailure.putIfAbsent(key, entry);
            if (failed.size() > 1) {
                failingLater.add(dump.rank());
            }
        }
        List<String> lines = new ArrayList<>();
        byFailure.forEach((key, failing) -> {
            Entry entry = firstFailure.get(key);
            List<Integer> ranks = failing.stream().map(TraceDump::rank).toList();
            lines.add(ranks(ranks) + " failed #" + entry.sequence() + " " + entry.operation()
                    + (ranks.size() > 1 ? "; rank " + ranks.get(0) + "'s error: " : ": ") + clipped(entry.error()));
        });
        if (!failingLater.isEmpty()) {
            lines.add(ranks(failingLater) + " failed later calls too");
        }
        return lines;
    }

    private static String call(Entry entry) {
        String arguments = entry.describe();
        return entry.operation() + (arguments.isEmpty() ? "" : " " + arguments);
    }

    /** The operation most ranks called at {@code sequence}, the lowest rank's on a tie, or null when none did. */
    private static String operationAt(List<TraceDump> dumps, long sequence) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (TraceDump dump : dumps) {
            Entry entry = at(dump, sequence);
            if (entry != null) {
                counts.merge(entry.operation(), 1, Integer::sum);
            }
        }
        String most = null;
        for (Map.Entry<String, Integer> count : counts.entrySet()) {
            if (most == null || count.getValue() > counts.get(most)) {
                most = count.getKey();
            }
        }
        return most;
    }

    /** The dump's entry of {@code sequence}, or null; entries are in increasing sequence order. */
    static Entry at(TraceDump dump, long sequence) {
        List<Entry> entries = dump.entries();
        int low = 0;
        int high = entries.size() - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            long found = entries.get(middle).sequence();
            if (found == sequence) {
                return entries.get(middle);
            } else if (found < sequence) {
                low = middle + 1;
            } else {
                high = middle - 1;
            }
        }
        return null;
    }

    /** An error's exception class, the part before the first colon, as the format writes it. */
    static String shortError(String error) {
        if (error == null || error.isBlank()) {
            return "failed";
        }
        int colon = error.indexOf(':');
        String head = (colon < 0 ? error : error.substring(0, colon)).strip();
        return head.matches("[\\w.$]+") ? head : clipped(error);
    }

    /** The error's first line, cut to a length that keeps the report's lines short. */
    private static String clipped(String error) {
        if (error == null) {
            return "no error recorded";
        }
        String line = error.lines().findFirst().orElse("").strip();
        return line.length() <= ERROR_CHARS ? line : line.substring(0, ERROR_CHARS) + "...";
    }

    /** "rank 2", or "ranks 0, 1, 3", with runs of three or more as "0-15". */
    static String ranks(Collection<Integer> ranks) {
        return (ranks.size() == 1 ? "rank " : "ranks ") + list(ranks);
    }

    /** "0, 1, 3", with runs of three or more as "0-15". */
    static String list(Collection<Integer> numbers) {
        List<Integer> sorted = new ArrayList<>(new TreeSet<>(numbers));
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < sorted.size(); ) {
            int j = i;
            while (j + 1 < sorted.size() && sorted.get(j + 1) == sorted.get(j) + 1) {
                j++;
            }
            if (j - i >= 2) {
                parts.add(sorted.get(i) + "-" + sorted.get(j));
            } else {
                for (int k = i; k <= j; k++) {
                    parts.add(sorted.get(k).toString());
                }
            }
            i = j + 1;
        }
        return String.join(", ", parts);
    }

    /** A non-negative duration for a person: "0.4 ms", "340 ms", "5.1 s", "42 s", "12 min". */
    static String duration(long nanos) {
        if (nanos < 10 * NANOS_PER_MILLI) {
            return String.format(Locale.ROOT, "%.1f ms", nanos / (double) NANOS_PER_MILLI);
        }
        if (nanos < NANOS_PER_SECOND) {
            return Math.round(nanos / (double) NANOS_PER_MILLI) + " ms";
        }
        if (nanos < 100 * NANOS_PER_SECOND) {
            return String.format(Locale.ROOT, "%.1f s", nanos / (double) NANOS_PER_SECOND);
        }
        if (nanos < 600 * NANOS_PER_SECOND) {
            return Math.round(nanos / (double) NANOS_PER_SECOND) + " s";
        }
        return Math.round(nanos / (60.0 * NANOS_PER_SECOND)) + " min";
    }
}
