package io.ringstar.transport.inproc;

import static io.ringstar.testing.TraceDumps.longOrNull;
import static io.ringstar.testing.TraceDumps.stringOrNull;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.Communicator;
import io.ringstar.DistributedConfig;
import io.ringstar.ReduceOp;
import io.ringstar.Transport;
import io.ringstar.config.TraceOptions;
import io.ringstar.internal.tensor.TensorMemory;
import io.ringstar.observe.CollectiveEvent;
import io.ringstar.observe.CollectiveListener;
import io.ringstar.testing.Ranks;
import io.ringstar.testing.TraceDumps;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * What a waiting group says of a rank that stopped calling, on in-process groups: the stall
 * warning of every waiting rank names the paused rank as late, and no other rank that was not
 * (checked against the ranks' own clocks), whatever the world size and all-reduce algorithm, and
 * the job still ends with exact results; a monitored barrier
 * names every rank that never came, on every rank that did; a rank in no call writes its trace
 * dump when a peer reports the group's failure; and a dump on request shows a waiting call as
 * started, with the peer it waits for and how long it has waited so far.
 *
 * <p>Thresholds and pauses are short (the stall warning at {@value #STALL_WARNING_MILLIS} ms, a
 * pause of {@value #PAUSE_MILLIS} ms) with a margin for a loaded 2-core machine; a group's own
 * timeout is far longer, except where a test wants it to pass.
 *
 * <p>Not made here: a late rank still inside an earlier call. Every collective needs each rank's
 * data or notice, so its peers get past a call it is still in only while it finishes the call's
 * tail after its last send, where a test cannot hold it (a loaded machine sometimes does, and the
 * warnings' check allows it then); the warning's wording for it is {@code StallWarningTest}'s.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InProcessStallTest {
    /** Every wait of a call where no test wants the timeout to pass. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);
    /** The watchdog over each group's ranks. */
    private static final Duration WATCHDOG = Duration.ofSeconds(30);
    private static final long STALL_WARNING_MILLIS = 200;
    /** How long rank 2 stays out of the calls: well past the warning, far short of the timeout. */
    private static final long PAUSE_MILLIS = 500;
    private static final int PAUSED = 2;
    /** The logger of the stall warning and of the dumps' notices; held, so JUL keeps its handlers. */
    private static final Logger OBSERVE_LOG = Logger.getLogger("io.ringstar.observe");
    /** Lengths of the all-reduce tests' tensors: FLOAT 1001 and 3x7, DOUBLE 13. */
    private static final long[][] SHAPES = {{1001}, {3, 7}, {13}};

    /** What one rank does, given every rank's communicator (element {@code r} for rank {@code r}). */
    @FunctionalInterface
    private interface Body<T> {
        T run(int rank, List<Communicator> group) throws Exception;
    }

    /** Runs {@code body} on every rank of a fresh group of {@code world} communicators; closes them all after. */
    private static <T> List<T> onEveryRank(int world, Duration timeout, Map<String, String> options, Body<T> body) {
        List<Transport> transports = InProcessTransport.createGroup(world, timeout);
        List<Communicator> members = new ArrayList<>();
        try {
            for (int rank = 0; rank < world; rank++) {
                DistributedConfig.Builder config = DistributedConfig.builder().worldSize(world).rank(rank)
                        .timeout(timeout);
                options.forEach(config::option);
                members.add(new Communicator(config.build(), transports.get(rank)));
            }
            return Ranks.runAll(world, WATCHDOG, rank -> body.run(rank, members));
        } finally {
            members.forEach(Communicator::close);
            Ranks.closeAll(transports);
        }
    }

    /** Hears the WARNINGs of {@code io.ringstar.observe} while open, from whichever thread logs them. */
    private static final class Warnings extends Handler implements AutoCloseable {
        final List<String> messages = new CopyOnWriteArrayList<>();

        Warnings() {
            OBSERVE_LOG.addHandler(this);
        }

        @Override
        public void publish(LogRecord record) {
            if (record.getLevel() == Level.WARNING) {
                messages.add(record.getMessage());
            }
        }

        /** The stall warnings heard (not the dumps' notices). */
        List<String> stalls() {
            return messages.stream().filter(message -> message.contains(". Late: ")).toList();
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            OBSERVE_LOG.removeHandler(this);
        }
    }

    // ---- all-reduce calls with a closed form ----

    /** Rank {@code rank}'s element {@code index} of tensor {@code tensor} in call {@code call}: small integers. */
    private static double value(int rank, int call, int tensor, int index) {
        return (rank + 1) * ((index + 3 * tensor) % 17 + 1) + call;
    }

    /** The sum of {@link #value} over ranks {@code 0..world-1}. */
    private static double sum(int world, int call, int tensor, int index) {
        return ((index + 3 * tensor) % 17 + 1) * (world * (world + 1) / 2.0) + world * call;
    }

    /** FLOAT 1001, FLOAT 3x7 and DOUBLE 13, filled with rank {@code rank}'s values of call {@code call}. */
    private static INDArray[] tensors(int rank, int call) {
        INDArray[] tensors = new INDArray[SHAPES.length];
        for (int t = 0; t < SHAPES.length; t++) {
            int length = (int) Arrays.stream(SHAPES[t]).reduce(1, (a, b) -> a * b);
            double[] values = new double[length];
            float[] floats = new float[length];
            for (int i = 0; i < length; i++) {
                values[i] = value(rank, call, t, i);
                floats[i] = (float) values[i];
            }
            tensors[t] = t == SHAPES.length - 1 ? Nd4j.create(values, SHAPES[t], 'c')
                    : Nd4j.create(floats, SHAPES[t], 'c');
        }
        return tensors;
    }

    /** Fails unless every element of every tensor is the sum over the group, exactly. */
    private static void assertSums(int world, int rank, int call, INDArray[] tensors) {
        for (int t = 0; t < tensors.length; t++) {
            double[] actual = tensors[t].dup('c').data().asDouble();
            for (int i = 0; i < actual.length; i++) {
                double expected = sum(world, call, t, i);
                if (actual[i] != expected) {
                    throw new AssertionError("rank " + rank + " of " + world + ", call " + call + ", tensor " + t
                            + " (" + tensors[t].dataType() + "), element " + i + ": " + actual[i] + ", expected "
                            + expected);
                }
            }
        }
    }

    /** Call {@code call} of the closed form on this rank: allReduce SUM, results checked. */
    private static void allReduce(int world, int rank, int call, Communicator communicator) {
        INDArray[] tensors = tensors(rank, call);
        try {
            communicator.allReduce(ReduceOp.SUM, tensors);
            assertSums(world, rank, call, tensors);
        } finally {
            TensorMemory.close(tensors);
        }
    }

    /**
     * Runs each algorithm once on 5 ranks before the tests: the first calls of a JVM load and
     * compile their classes, which can take longer than the stall warning's threshold.
     */
    @BeforeAll
    static void warmUp() {
        for (String algorithm : new String[] {Communicator.ALGORITHM_RING, Communicator.ALGORITHM_DOUBLING}) {
            onEveryRank(5, CALL_TIMEOUT, Map.of(Communicator.ALGORITHM_OPTION, algorithm,
                    TraceOptions.STALL_WARNING_OPTION, TraceOptions.OFF), (rank, group) -> {
                        for (int call = 1; call <= 3; call++) {
                            allReduce(5, rank, call, group.get(rank));
                        }
                        return null;
                    });
        }
    }

    // ---- stall warnings ----

    @Test
    void everyWaitingRankWarnsOnceNamingThePausedRankLateWhateverTheSizeAndAlgorithm() {
        int calls = 4;
        // The call rank 2 is late to, per group: each of the 4, the first (before which it has made no call) twice.
        int[] lateTo = {3, 1, 4, 2, 1, 3};
        int configuration = 0;
        for (int world = 3; world <= 5; world++) {
            for (String algorithm : new String[] {Communicator.ALGORITHM_RING, Communicator.ALGORITHM_DOUBLING}) {
                int n = world;
                int pausedBefore = lateTo[configuration++];
                String where = world + " ranks, " + algorithm + ", rank 2 late to call " + pausedBefore;
                List<String> stalls;
                List<long[][]> times;
                CyclicBarrier start = new CyclicBarrier(world);
                try (Warnings warnings = new Warnings()) {
                    times = onEveryRank(world, CALL_TIMEOUT, Map.of(Communicator.ALGORITHM_OPTION, algorithm,
                            TraceOptions.STALL_WARNING_OPTION, STALL_WARNING_MILLIS + "ms"), (rank, group) -> {
                                // When each call started and ended on this rank, by the clock the warning reads.
                                long[][] startedEnded = new long[2][calls];
                                group.get(rank).addListener(new CollectiveListener() {
                                    @Override
                                    public void completed(CollectiveEvent event) {
                                        int call = (int) event.sequence() - 1;
                                        startedEnded[0][call] = event.startedNanos();
                                        startedEnded[1][call] = event.endedNanos();
                                    }
                                });
                                // A new thread's first arrays cost ND4J more: made before the ranks start together.
                                TensorMemory.close(tensors(rank, 0));
                                start.await(WATCHDOG.toMillis(), TimeUnit.MILLISECONDS);
                                for (int call = 1; call <= calls; call++) {
                                    if (rank == PAUSED && call == pausedBefore) {
                                        // In no call: after the previous one, if any, and before this one.
                                        Thread.sleep(PAUSE_MILLIS);
                                    }
                                    allReduce(n, rank, call, group.get(rank));
                                }
                                return startedEnded;
                            });
                    stalls = warnings.stalls();
                }
                assertWarnings(where, world, pausedBefore, stalls, times);
            }
        }
    }

    private static final Pattern WARNING = Pattern.compile("(\\w+) #(\\d+) on rank (\\d+): waiting (\\d+\\.\\d) s; "
            + "(.*)\\. Late: (none|ranks? [0-9, and]+)\\. The job goes on until the timeout\\.");
    private static final Pattern WAITING_TOO = Pattern.compile("(ranks? [0-9, and]+) (is|are) waiting too");
    private static final long THRESHOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(STALL_WARNING_MILLIS);

    private static List<Integer> ranksIn(String text) {
        List<Integer> ranks = new ArrayList<>();
        Matcher number = Pattern.compile("\\d+").matcher(text);
        while (number.find()) {
            ranks.add(Integer.parseInt(number.group()));
        }
        return ranks;
    }

    /**
     * Every rank but the paused one warned exactly once for the call rank 2 was late to, naming
     * that call, rank 2 as not having started it (with its last call), and no rank as not
     * answering; no rank warned for another call. Each warning is also checked against the ranks'
     * own clocks ({@code times}: per rank, when each call started and ended, by the clock the
     * warning reads): it came from a call that did wait past the threshold; each rank it names late
     * other than rank 2 started that call at least half the threshold after the warning rank did
     * (it was asked once the warning rank had waited the threshold), and each rank it names waiting
     * too had started it before the warning rank's call ended. So on a quiet machine the only late
     * rank is rank 2 and the only warnings are those for its call; on one so loaded that a rank
     * is scheduled late by itself, a warning may rightly name it, and that is allowed, but only then.
     */
    private static void assertWarnings(String where, int world, int pausedBefore, List<String> stalls,
            List<long[][]> times) {
        int[] warned = new int[world];
        int allowed = 0;
        for (String warning : stalls) {
            String what = where + ": " + warning;
            Matcher parts = WARNING.matcher(warning);
            assertTrue(parts.matches(), what);
            assertEquals("allReduce", parts.group(1), what);
            int call = Integer.parseInt(parts.group(2)) - 1;
            int rank = Integer.parseInt(parts.group(3));
            assertFalse(warning.contains("not answer"), what);
            long started = times.get(rank)[0][call];
            long ended = times.get(rank)[1][call];
            assertTrue(ended - started >= THRESHOLD_NANOS, "a warning for a call that took " + (ended - started)
                    / 1_000_000 + " ms: " + what);
            double waited = Double.parseDouble(parts.group(4));
            assertTrue(waited >= STALL_WARNING_MILLIS / 1000.0 && waited <= (ended - started) / 1e9 + 0.05, what);
            List<Integer> late = ranksIn(parts.group(6).equals("none") ? "" : parts.group(6));
            Matcher waitingToo = WAITING_TOO.matcher(parts.group(5));
            List<Integer> waiting = waitingToo.find() ? ranksIn(waitingToo.group(1)) : List.of();
            boolean pausedCall = call == pausedBefore - 1 && rank != PAUSED;
            if (pausedCall) {
                warned[rank]++;
                String lastCall = pausedBefore == 1 ? "it has made no call yet"
                        : "its last call, #" + (pausedBefore - 1) + ", completed ";
                assertTrue(late.contains(PAUSED) && warning.contains("rank 2 has not started it (" + lastCall),
                        what);
                List<Integer> named = new ArrayList<>(late);
                named.addAll(waiting);
                named.sort(null);
                List<Integer> others = new ArrayList<>();
                for (int other = 0; other < world; other++) {
                    if (other != rank) {
                        others.add(other);
                    }
                }
                assertEquals(others, named, "every other rank named late or waiting too: " + what);
            }
            for (int named : late) {
                if (pausedCall && named == PAUSED) {
                    continue;
                }
                allowed++;
                long after = times.get(named)[0][call] - started;
                assertTrue(after >= THRESHOLD_NANOS / 2, "rank " + named + " named late, but it started the call "
                        + after / 1_000_000 + " ms after rank " + rank + ": " + what);
            }
            for (int named : waiting) {
                assertTrue(times.get(named)[0][call] < ended, "rank " + named + " named waiting, but it started "
                        + "the call after rank " + rank + "'s ended: " + what);
            }
        }
        for (int rank = 0; rank < world; rank++) {
            assertEquals(rank == PAUSED ? 0 : 1, warned[rank], where + ", rank " + rank + "'s warnings for call "
                    + pausedBefore + ": " + stalls);
        }
        if (allowed > 0 || stalls.size() != world - 1) {
            System.out.printf("%s: the machine made %d rank(s) late by itself; %d warnings: %s%n", where, allowed,
                    stalls.size(), stalls);
        }
    }

    // ---- monitored barrier ----

    @Test
    void aMonitoredBarrierNamesEveryAbsentRankOnEveryRankThatCame() {
        int world = 4;
        Duration wait = Duration.ofMillis(500);
        CountDownLatch told = new CountDownLatch(2);
        List<Long> elapsed = onEveryRank(world, CALL_TIMEOUT, Map.of(), (rank, group) -> {
            Communicator communicator = group.get(rank);
            allReduce(world, rank, 1, communicator);
            if (rank >= 2) {
                // Never at the barrier: out of any call until the others have thrown, then closed.
                assertTrue(told.await(WATCHDOG.toMillis() / 2, TimeUnit.MILLISECONDS), "ranks 0 and 1 done");
                return 0L;
            }
            try {
                long start = System.nanoTime();
                CollectiveTimeoutException timeout = assertThrows(CollectiveTimeoutException.class,
                        () -> communicator.monitoredBarrier(wait));
                long took = System.nanoTime() - start;
                String message = timeout.getMessage();
                assertTrue(message.contains("ranks [2, 3] did not reach the barrier"), message);
                assertTrue(message.contains("monitoredBarrier"), message);
                assertEquals(rank, timeout.rank(), message);
                assertEquals(2, timeout.peerRank(), message);
                // The communicator is failed: a later call throws at once, the first failure its cause.
                long after = System.nanoTime();
                CollectiveTimeoutException again = assertThrows(CollectiveTimeoutException.class,
                        () -> allReduce(world, rank, 2, communicator));
                assertSame(timeout, again.getCause(), again.toString());
                assertTrue(System.nanoTime() - after < TimeUnit.SECONDS.toNanos(1), "failed at once");
                return took;
            } finally {
                told.countDown();
            }
        });
        for (int rank = 0; rank < 2; rank++) {
            long took = elapsed.get(rank);
            assertTrue(took >= wait.toNanos() && took < TimeUnit.SECONDS.toNanos(3), "rank " + rank + " waited "
                    + took / 1_000_000 + " ms for a barrier of " + wait + " (the group's timeout is " + CALL_TIMEOUT
                    + ")");
        }
    }

    @Test
    void aMonitoredBarrierThatEveryRankReachesReturnsAndTheCallsGoOn() {
        int world = 4;
        long late = 150;
        List<long[]> times = onEveryRank(world, CALL_TIMEOUT, Map.of(), (rank, group) -> {
            Communicator communicator = group.get(rank);
            allReduce(world, rank, 1, communicator);
            if (rank == 3) {
                Thread.sleep(late);
            }
            long entered = System.nanoTime();
            communicator.monitoredBarrier(Duration.ofSeconds(5));
            long left = System.nanoTime();
            allReduce(world, rank, 2, communicator);
            communicator.barrier();
            allReduce(world, rank, 3, communicator);
            return new long[] {entered, left};
        });
        long lastEntered = times.stream().mapToLong(entry -> entry[0]).max().orElseThrow();
        for (int rank = 0; rank < world; rank++) {
            assertTrue(times.get(rank)[1] >= lastEntered, "rank " + rank + " left the barrier "
                    + (lastEntered - times.get(rank)[1]) / 1_000 + " us before the last rank entered it");
        }
    }

    // ---- dumps ----

    @Test
    void aRankInNoCallWritesItsDumpWhenAPeerReportsTheFailure(@TempDir Path dir) {
        int world = 3;
        Duration timeout = Duration.ofSeconds(1);
        Map<String, String> options = Map.of(TraceOptions.TRACE_DIR_OPTION, dir.toString());
        List<JsonObject> dumps = onEveryRank(world, timeout, options, (rank, group) -> {
            Communicator communicator = group.get(rank);
            Path file = dir.resolve("ringstar-ringstar-rank" + rank + ".json");
            allReduce(world, rank, 1, communicator);
            if (rank != PAUSED) {
                CollectiveTimeoutException failure = assertThrows(CollectiveTimeoutException.class,
                        () -> allReduce(world, rank, 2, communicator));
                assertTrue(Files.exists(file), file + " written before the call threw: " + failure);
                return TraceDumps.read(file);
            }
            assertFalse(Files.exists(file), "no dump before any failure");
            // In no call from now on: the dump must come from the transport hearing of the failure.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.exists(file)) {
                if (System.nanoTime() > deadline) {
                    fail("rank 2 wrote no dump within 10 s of its last call; the directory holds " + listing(dir));
                }
                Thread.sleep(10);
            }
            JsonObject dump = TraceDumps.read(file);
            // The group is failed for this rank too: its next call throws, and does not wait.
            assertThrows(CollectiveException.class, () -> allReduce(world, rank, 2, communicator));
            return dump;
        });
        for (int rank = 0; rank < world; rank++) {
            JsonObject dump = dumps.get(rank);
            String what = "rank " + rank + ": " + dump;
            assertEquals(rank, dump.get("rank").getAsInt(), what);
            String reason = dump.get("reason").getAsString();
            JsonArray entries = dump.getAsJsonArray("entries");
            JsonObject first = entries.get(0).getAsJsonObject();
            assertEquals(1, first.get("sequence").getAsLong(), what);
            assertEquals("completed", first.get("state").getAsString(), what);
            if (rank == PAUSED) {
                assertTrue(reason.matches("failure reported by rank [01] \\(first on rank [01]\\)"), what);
                assertEquals(1, entries.size(), "its last entry the completed call, no other: " + what);
                continue;
            }
            assertTrue(reason.startsWith("failure: CollectiveTimeoutException: "), what);
            assertEquals(2, entries.size(), what);
            JsonObject last = entries.get(1).getAsJsonObject();
            assertEquals(2, last.get("sequence").getAsLong(), what);
            assertEquals("allReduce", last.get("operation").getAsString(), what);
            assertEquals("failed", last.get("state").getAsString(), what);
            String error = stringOrNull(last, "error");
            assertNotNull(error, what);
            assertTrue(error.startsWith("CollectiveTimeoutException: "), what);
        }
    }

    private static List<String> listing(Path dir) throws java.io.IOException {
        try (var files = Files.list(dir)) {
            return files.map(path -> path.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aDumpOnRequestShowsAWaitingCallStartedWithThePeerItWaitsFor(@TempDir Path dir) {
        int world = 3;
        long pause = 300;
        List<Path> files = onEveryRank(world, CALL_TIMEOUT, Map.of(Communicator.ALGORITHM_OPTION,
                Communicator.ALGORITHM_RING), (rank, group) -> {
                    allReduce(world, rank, 1, group.get(rank));
                    List<Path> dumped = new ArrayList<>();
                    if (rank == PAUSED) {
                        Thread.sleep(pause);
                        // From this thread, while ranks 0 and 1 wait in call 2 for this rank.
                        dumped.add(group.get(0).dumpTrace(dir.resolve("0")));
                        dumped.add(group.get(1).dumpTrace(dir.resolve("1")));
                    }
                    allReduce(world, rank, 2, group.get(rank));
                    return dumped;
                }).get(PAUSED);
        for (int rank = 0; rank < 2; rank++) {
            JsonObject dump = TraceDumps.read(files.get(rank));
            String what = "rank " + rank + ": " + dump;
            assertEquals(rank, dump.get("rank").getAsInt(), what);
            assertEquals("request", dump.get("reason").getAsString(), what);
            JsonArray entries = dump.getAsJsonArray("entries");
            assertEquals(2, entries.size(), what);
            assertEquals("completed", entries.get(0).getAsJsonObject().get("state").getAsString(), what);
            JsonObject running = entries.get(1).getAsJsonObject();
            assertEquals(2, running.get("sequence").getAsLong(), what);
            assertEquals("started", running.get("state").getAsString(), what);
            // In a ring, rank r receives from rank r - 1 only: rank 0 waits for the paused rank, rank 1 for rank 0.
            assertEquals(rank == 0 ? 2 : 0, longOrNull(running, "waitingOn"), what);
            long sinceStart = dump.getAsJsonObject("clock").get("nanoTime").getAsLong()
                    - running.get("startedNanos").getAsLong();
            long waited = running.get("waitNanos").getAsLong();
            assertTrue(waited <= sinceStart && waited >= sinceStart / 2, "rank " + rank + " has waited "
                    + waited / 1_000_000 + " ms of the " + sinceStart / 1_000_000 + " ms its call ran: " + what);
        }
    }
}
