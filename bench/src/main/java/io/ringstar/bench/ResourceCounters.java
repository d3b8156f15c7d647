package io.ringstar.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * What the kernel has counted for the calling thread or for this process: CPU time, page faults and
 * context switches. Read twice around a row's timed calls, the difference ({@link #since}) says
 * whether the calls were working (CPU time near the wall time) or waiting (voluntary switches, CPU
 * time far below it). Each field is {@link #UNKNOWN} where the system does not give it (no
 * {@code /proc}, as on macOS; a JVM without thread CPU time).
 *
 * <p>Sources. The calling thread: CPU time from {@link ThreadMXBean#getCurrentThreadCpuTime}
 * (nanoseconds), faults from {@code /proc/thread-self/stat} (fields 10 and 12), switches from
 * {@code /proc/thread-self/status}. The process: faults from {@code /proc/self/stat}, which the
 * kernel sums over every thread, exited ones included; CPU time and switches summed over the live
 * threads of {@code /proc/self/task}: CPU time from each one's {@code schedstat} (nanoseconds;
 * {@code /proc/self/stat}'s user and system times count clock ticks of 10 ms, too coarse for a row
 * of 5 ms), switches from each one's {@code status} ({@code /proc/self/status} gives only the main
 * thread's). A thread that exits between the two readings takes its share of those two with it,
 * and a thread's {@code schedstat} counts its current stretch on the CPU only from the next
 * scheduler tick (1 to 4 ms) or switch on, so the process's CPU time over a row of a few
 * milliseconds is rough; the thread's own, from the JVM, is exact.
 *
 * @param cpuNanos CPU time, user and system
 * @param minorFaults page faults served without I/O (first touches of fresh memory, mostly)
 * @param majorFaults page faults that read from a disk
 * @param voluntarySwitches times the thread gave the CPU up (blocked, parked, slept)
 * @param involuntarySwitches times the scheduler took the CPU away
 */
record ResourceCounters(long cpuNanos, long minorFaults, long majorFaults, long voluntarySwitches,
        long involuntarySwitches) {
    /** A field the system does not give. */
    static final long UNKNOWN = -1;
    /** Every field unknown. */
    static final ResourceCounters NONE = new ResourceCounters(UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN);
    /** How many fields {@link #toArray} writes. */
    static final int FIELDS = 5;

    private static final Path THREAD = Path.of("/proc/thread-self");
    private static final Path PROCESS = Path.of("/proc/self");
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** {@code stat}'s fields after the command name in parentheses start at field 3 (the state). */
    private static final int FIRST_FIELD_AFTER_NAME = 3;
    private static final int MINOR_FAULTS_FIELD = 10;
    private static final int MAJOR_FAULTS_FIELD = 12;

    /** The calling thread's counters. Reads two small files; never blocks for long. */
    static ResourceCounters ofCurrentThread() {
        long cpu = THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : UNKNOWN;
        long[] faults = faults(read(THREAD.resolve("stat")));
        long[] switches = switches(read(THREAD.resolve("status")));
        return new ResourceCounters(Math.max(UNKNOWN, cpu), faults[0], faults[1], switches[0], switches[1]);
    }

    /** This process's counters: two files per thread of the process (a few dozen in a JVM). */
    static ResourceCounters ofProcess() {
        long[] faults = faults(read(PROCESS.resolve("stat")));
        long cpu = 0;
        long voluntary = 0;
        long involuntary = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(PROCESS.resolve("task"))) {
            for (Path task : tasks) {
                String schedstat = read(task.resolve("schedstat"));
                String status = read(task.resolve("status"));
                if (schedstat == null || status == null) {
                    // Exited since the listing: its share is gone (see the class comment).
                    continue;
                }
                long[] switches = switches(status);
                cpu = add(cpu, schedstatNanos(schedstat));
                voluntary = add(voluntary, switches[0]);
                involuntary = add(involuntary, switches[1]);
            }
        } catch (IOException | RuntimeException e) {
            // No /proc/self/task (not Linux), or unreadable: those three stay unknown.
            cpu = UNKNOWN;
            voluntary = UNKNOWN;
            involuntary = UNKNOWN;
        }
        return new ResourceCounters(cpu, faults[0], faults[1], voluntary, involuntary);
    }

    /** A sum that stays unknown once a term is. */
    private static long add(long sum, long term) {
        return sum == UNKNOWN || term == UNKNOWN ? UNKNOWN : sum + term;
    }

    /** What was counted from {@code earlier} to this reading; unknown where either reading is. */
    ResourceCounters since(ResourceCounters earlier) {
        return new ResourceCounters(minus(cpuNanos, earlier.cpuNanos), minus(minorFaults, earlier.minorFaults),
                minus(majorFaults, earlier.majorFaults), minus(voluntarySwitches, earlier.voluntarySwitches),
                minus(involuntarySwitches, earlier.involuntarySwitches));
    }

    private static long minus(long later, long earlier) {
        // A sum over threads can shrink when a thread exits between the readings: unknown, not negative.
        return later == UNKNOWN || earlier == UNKNOWN || later < earlier ? UNKNOWN : later - earlier;
    }

    /** The fields in declaration order, for the bench's gather of every rank's figures. */
    void toArray(long[] into, int offset) {
        into[offset] = cpuNanos;
        into[offset + 1] = minorFaults;
        into[offset + 2] = majorFaults;
        into[offset + 3] = voluntarySwitches;
        into[offset + 4] = involuntarySwitches;
    }

    /** The counters {@link #toArray} wrote at {@code offset}. */
    static ResourceCounters fromArray(long[] from, int offset) {
        return new ResourceCounters(from[offset], from[offset + 1], from[offset + 2], from[offset + 3],
                from[offset + 4]);
    }

    /**
     * The mean per call over several readings (ranks, or processes) of {@code field}, each over
     * {@code calls} calls; NaN when there are none or when one of them is unknown.
     */
    static double meanPerCall(List<ResourceCounters> readings, ToLongFunction<ResourceCounters> field,
            int calls) {
        if (readings.isEmpty() || calls <= 0) {
            return Double.NaN;
        }
        double sum = 0;
        for (ResourceCounters reading : readings) {
            long value = field.applyAsLong(reading);
            if (value == UNKNOWN) {
                return Double.NaN;
            }
            sum += value;
        }
        return sum / readings.size() / calls;
    }

    /**
     * Minor and major faults from a {@code stat} line ({@code proc(5)}); unknown for {@code null}
     * or a line that does not parse. The command name, in parentheses, may hold spaces and
     * parentheses itself, so the fields are counted from its last closing one.
     */
    static long[] faults(String stat) {
        long[] unknown = {UNKNOWN, UNKNOWN};
        if (stat == null) {
            return unknown;
        }
        int nameEnd = stat.lastIndexOf(')');
        if (nameEnd < 0) {
            return unknown;
        }
        String[] fields = stat.substring(nameEnd + 1).trim().split(" +");
        int major = MAJOR_FAULTS_FIELD - FIRST_FIELD_AFTER_NAME;
        if (fields.length <= major) {
            return unknown;
        }
        return new long[] {number(fields[MINOR_FAULTS_FIELD - FIRST_FIELD_AFTER_NAME]), number(fields[major])};
    }

    /** Voluntary and involuntary context switches from a {@code status} file; unknown where a line is missing. */
    static long[] switches(String status) {
        long[] switches = {UNKNOWN, UNKNOWN};
        if (status == null) {
            return switches;
        }
        for (String line : status.split("\n")) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
                switches[0] = number(line.substring(line.indexOf(':') + 1).trim());
            } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                switches[1] = number(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return switches;
    }

    /** The time on the CPU, in nanoseconds, from a {@code schedstat} file (its first field); unknown otherwise. */
    static long schedstatNanos(String schedstat) {
        if (schedstat == null) {
            return UNKNOWN;
        }
        String trimmed = schedstat.trim();
        int end = trimmed.indexOf(' ');
        return number(end < 0 ? trimmed : trimmed.substring(0, end));
    }

    private static long number(String text) {
        try {
            long value = Long.parseLong(text);
            return value < 0 ? UNKNOWN : value;
        } catch (NumberFormatException e) {
            return UNKNOWN;
        }
    }

    /** The file's text, or {@code null} when it cannot be read (absent, or its thread has exited). */
    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
