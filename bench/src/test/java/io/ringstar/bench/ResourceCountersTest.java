package io.ringstar.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The kernel's counters: parsed from /proc's formats, and sane for a thread that works and one that waits. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ResourceCountersTest {
    private static final long U = ResourceCounters.UNKNOWN;

    @Test
    void parsesProcFormatsAndCallsAnythingElseUnknown() {
        // A command name with spaces and parentheses: the fields count from its last ')'.
        String stat = "4242 (a b) (c)) S 1 4242 4242 0 -1 4194368 1234 0 56 0 48 9 0 0 20 0 20 0 3147714 9189875712";
        assertArrayEquals(new long[] {1234, 56}, ResourceCounters.faults(stat));
        assertArrayEquals(new long[] {U, U}, ResourceCounters.faults("4242 (java) S 1 2"));
        assertArrayEquals(new long[] {U, U}, ResourceCounters.faults("no name"));
        assertArrayEquals(new long[] {U, U}, ResourceCounters.faults(null));
        String status = "Name:\tjava\nThreads:\t20\nvoluntary_ctxt_switches:\t159\nnonvoluntary_ctxt_switches:\t281\n";
        assertArrayEquals(new long[] {159, 281}, ResourceCounters.switches(status));
        assertArrayEquals(new long[] {U, U}, ResourceCounters.switches("Name:\tjava\n"));
        assertEquals(602479274L, ResourceCounters.schedstatNanos("602479274 942461464 1186\n"));
        assertEquals(U, ResourceCounters.schedstatNanos("x 1 2"));
        assertEquals(U, ResourceCounters.schedstatNanos(null));
    }

    @Test
    void differencesAndMeansStayUnknownWhereAReadingIs() {
        ResourceCounters before = new ResourceCounters(1_000, 10, U, 5, 7);
        ResourceCounters after = new ResourceCounters(9_000, 30, 4, 4, 9);
        // Switches fell (a thread exited between the readings of a sum): unknown, never negative.
        assertEquals(new ResourceCounters(8_000, 20, U, U, 2), after.since(before));
        List<ResourceCounters> ranks = List.of(new ResourceCounters(8_000, 20, 0, 2, 2),
                new ResourceCounters(4_000, 0, 0, 6, U));
        assertEquals(3_000.0, ResourceCounters.meanPerCall(ranks, ResourceCounters::cpuNanos, 2));
        assertEquals(2.0, ResourceCounters.meanPerCall(ranks, ResourceCounters::voluntarySwitches, 2));
        assertTrue(Double.isNaN(ResourceCounters.meanPerCall(ranks, ResourceCounters::involuntarySwitches, 2)));
        assertTrue(Double.isNaN(ResourceCounters.meanPerCall(List.of(), ResourceCounters::cpuNanos, 2)));
        long[] row = new long[2 + ResourceCounters.FIELDS];
        after.toArray(row, 2);
        assertEquals(after, ResourceCounters.fromArray(row, 2));
    }

    @Test
    void aBusyThreadCountsCpuAndFaultsAndAParkedOneSwitchesAndAlmostNoCpu() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/thread-self/stat")), "Linux /proc");
        ResourceCounters processBefore = ResourceCounters.ofProcess();
        ResourceCounters busyBefore = ResourceCounters.ofCurrentThread();
        // Fresh memory, touched by this thread (the JDK zeroes it on allocation): minor faults. 64 MiB is
        // above glibc's largest mmap threshold (32 MiB), so malloc cannot hand back pages touched before.
        ByteBuffer fresh = ByteBuffer.allocateDirect(64 << 20);
        long sum = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < fresh.capacity(); i += 64) {
                fresh.put(i, (byte) (i + round));
                sum += fresh.get(i);
            }
        }
        ResourceCounters busy = ResourceCounters.ofCurrentThread().since(busyBefore);
        ResourceCounters process = ResourceCounters.ofProcess().since(processBefore);
        assertTrue(sum != 0 && busy.cpuNanos() > 0 && busy.minorFaults() > 0, busy.toString());
        assertTrue(busy.majorFaults() >= 0 && busy.voluntarySwitches() >= 0 && busy.involuntarySwitches() >= 0,
                busy.toString());
        // The process's faults include this thread's; its CPU time, read from another source, is counted too.
        assertTrue(process.minorFaults() >= busy.minorFaults() && process.cpuNanos() > 0, process + " vs " + busy);

        AtomicReference<ResourceCounters> parked = new AtomicReference<>();
        long[] wall = new long[1];
        Thread sleeper = new Thread(() -> {
            ResourceCounters before = ResourceCounters.ofCurrentThread();
            long start = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                LockSupport.parkNanos(5_000_000);
            }
            wall[0] = System.nanoTime() - start;
            parked.set(ResourceCounters.ofCurrentThread().since(before));
        });
        sleeper.start();
        sleeper.join();
        ResourceCounters waited = parked.get();
        // Every park gave the CPU up; the thread did next to nothing in its wall time.
        assertTrue(waited.voluntarySwitches() >= 10, waited.toString());
        assertTrue(waited.cpuNanos() >= 0 && waited.cpuNanos() < wall[0] / 10, waited + " in " + wall[0] + " ns");
    }
}
