package io.ringstar.train;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveException;
import io.ringstar.DistributedConfig;
import io.ringstar.PeerFailureException;
import io.ringstar.ranks.Algorithm;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class AsyncTrainingTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final PrintStream QUIET = new PrintStream(new ByteArrayOutputStream(), true);

    private static TrainSettings settings(String mode, int steps, int maxStaleness) {
        Map<String, String> flags = new HashMap<>(Map.of("model", "mlp", "samples", "6000", "features", "64",
                "hidden", "64", "steps", Integer.toString(steps), "batch-size", "60", "lr", "0.1", "eval-size", "1000",
                "log-every", "50", "seed", "11"));
        flags.put("mode", mode);
        flags.put("max-staleness", Integer.toString(maxStaleness));
        return TrainSettings.fromFlags(flags);
    }

    /**
     * Async training on 4 ranks (3 workers) ends in the accuracy band of sync training on the same
     * data: within 5 points of it, and above 50%. Ten classes make chance 10%; on 1000 held-out
     * samples guessing scores 10% +- 1%, so 50% is out of its reach by 40 standard deviations.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void asyncReachesTheAccuracyBandOfSync() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        TrainSummary sync = TrainGroup.run(4, TIMEOUT, new Trainer(settings("sync", 150, 4), Algorithm.PS, QUIET))
                .rank(0).summary();
        TrainGroup.Result async = TrainGroup.run(4, TIMEOUT, new Trainer(settings("async", 150, 4), Algorithm.PS,
                new PrintStream(printed, true, StandardCharsets.UTF_8)));
        // The first worker (rank 1, after the one server) reports, on the final parameters.
        TrainSummary reporter = async.rank(1).summary();
        assertTrue(sync.heldOutAccuracy() > 0.5, "sync accuracy " + sync.heldOutAccuracy());
        assertTrue(reporter.heldOutAccuracy() > 0.5, "async accuracy " + reporter.heldOutAccuracy());
        assertTrue(reporter.heldOutAccuracy() >= sync.heldOutAccuracy() - 0.05,
                "async " + reporter.heldOutAccuracy() + " vs sync " + sync.heldOutAccuracy());
        assertEquals("async", reporter.mode());
        assertTrue(reporter.maxStepLead() <= 4, "lead " + reporter.maxStepLead());
        for (int worker = 1; worker < 4; worker++) {
            TrainSummary summary = async.rank(worker).summary();
            assertEquals(150, summary.steps());
            assertTrue(summary.heldOutAccuracy() > 0.5, "worker " + worker + ": " + summary.heldOutAccuracy());
        }
        String text = printed.toString(StandardCharsets.UTF_8);
        assertEquals(3, text.split("\nstep ", -1).length - 1, text);
        // The pushes' figures come from the async server's collectiveStatistics.
        assertEquals(3, text.lines().filter(line -> line.matches("step +\\d+/150 .*  comm +\\d+%  push p50 [0-9.]+ ms"
                + " p99 [0-9.]+ ms waiting +\\d+%  version \\d+  max lead \\d+  held back \\d+")).count(), text);
        assertTrue(reporter.communicationShare() > 0 && reporter.communicationShare() <= 1, text);
        assertTrue(text.contains("train done: ps async, 4 ranks"), text);
    }

    /** Worker rank 1 is slowed down; the others must wait for it once they are K steps ahead. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theStalenessBoundHoldsAndIsWhatHoldsWorkersBack() throws Exception {
        // Seen from the workers, independently of the server's own count: when a worker starts step
        // s, every other worker has finished step s - K - 1, so it has started at least that step.
        java.util.concurrent.atomic.AtomicIntegerArray started = new java.util.concurrent.atomic.AtomicIntegerArray(4);
        java.util.concurrent.atomic.AtomicInteger largestLead = new java.util.concurrent.atomic.AtomicInteger();
        Trainer.StepHook slowRank1 = (rank, step) -> {
            started.set(rank, step);
            for (int other = 1; other < 4; other++) {
                largestLead.accumulateAndGet(step - started.get(other), Math::max);
            }
            if (rank == 1) {
                Thread.sleep(10);
            }
        };
        TrainSummary bounded = TrainGroup.run(4, TIMEOUT,
                new Trainer(settings("async", 60, 1), Algorithm.PS, QUIET, slowRank1)).rank(1).summary();
        assertTrue(bounded.maxStepLead() <= 1, "lead " + bounded.maxStepLead() + " exceeds the bound 1");
        assertTrue(largestLead.get() <= 2, "a worker started step s while another had not started s - 2: lead "
                + largestLead.get());
        assertTrue(bounded.heldBackReplies() > 0, "the bound never had to hold a fast worker back");

        // The same run without a real bound: the fast workers run far ahead of the slow one, so the
        // lead measured above is not zero by construction.
        for (int rank = 0; rank < 4; rank++) {
            started.set(rank, 0);
        }
        TrainSummary free = TrainGroup.run(4, TIMEOUT,
                new Trainer(settings("async", 60, 1000), Algorithm.PS, QUIET, slowRank1)).rank(1).summary();
        assertTrue(free.maxStepLead() > 5, "lead without a bound only " + free.maxStepLead());
        assertTrue(largestLead.get() > 5, "the workers' own view of the lead without a bound: " + largestLead.get());
        assertEquals(0, free.heldBackReplies());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aWorkerThatDiesFailsTheServerNamingItAndStopsTheOthers() throws Exception {
        Trainer.StepHook rank2Dies = (rank, step) -> {
            if (rank == 2 && step == 5) {
                throw new IllegalStateException("simulated crash of rank 2");
            }
        };
        long start = System.nanoTime();
        TrainGroup.Result result = TrainGroup.run(4, TIMEOUT,
                new Trainer(settings("async", 200, 2), Algorithm.PS, QUIET, rank2Dies));
        Throwable server = result.errors().get(0);
        assertTrue(server instanceof CollectiveException && server.getMessage().contains("worker rank 2"),
                String.valueOf(server));
        assertEquals(2, ((CollectiveException) server).peerRank());
        for (int worker : new int[] {1, 3}) {
            Throwable error = result.errors().get(worker);
            assertTrue(error instanceof PeerFailureException && error.getMessage().contains("server rank 0 stopped"),
                    "worker " + worker + ": " + error);
            assertEquals(2, ((CollectiveException) error).peerRank(), error.getMessage());
        }
        // Told at once, not left to the timeout.
        assertTrue(System.nanoTime() - start < TIMEOUT.toNanos() / 2, "took too long to stop");
    }

    /**
     * Two servers and two workers: each server holds half the parameters; the workers end with the
     * same final parameters, trained as well as with one server, and the summary says so.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void twoServersShardTheParameters() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        TrainGroup.Result result = TrainGroup.run(4, TIMEOUT, Map.of("servers", "2"), new Trainer(
                settings("async", 150, 2), Algorithm.PS, new PrintStream(printed, true, StandardCharsets.UTF_8)));
        TrainSummary reporter = result.rank(2).summary();
        assertTrue(reporter.heldOutAccuracy() > 0.5, "accuracy " + reporter.heldOutAccuracy());
        assertTrue(reporter.maxStepLead() <= 2, "lead " + reporter.maxStepLead());
        assertEquals(reporter.parameterDigest(), result.rank(3).summary().parameterDigest());
        String text = printed.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("30 per worker") && text.contains("2 servers"), text);
        assertTrue(text.contains("train done: ps async, 4 ranks"), text);
    }

    /** {@code --slow-rank}: the slow worker holds the others back under a bound, in async mode too. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aSlowRankSleepsBeforeEachOfItsSteps() {
        long start = System.nanoTime();
        TrainSummary summary = TrainGroup.run(3, TIMEOUT, new Trainer(settings("async", 20, 0), Algorithm.PS, QUIET)
                .withSlowRank(new SlowRankSettings(2, 25))).rank(1).summary();
        assertTrue(System.nanoTime() - start >= 20 * 25_000_000L, "20 steps of 25 ms took less");
        assertTrue(summary.heldBackReplies() > 0, "lock step never held the fast worker back");
        assertThrows(IllegalArgumentException.class, () -> SlowRankSettings.fromFlags(Map.of("slow-rank", "1")));
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void oneRankInAsyncModeTrainsLocally() {
        TrainSummary summary = new Trainer(settings("async", 30, 4), Algorithm.PS, QUIET)
                .run(DistributedConfig.builder().build(), null);
        assertEquals(30, summary.steps());
        assertTrue(summary.lossCurve()[29] < summary.lossCurve()[0]);
    }

    @Test
    void asyncWithTheRingIsAUsageError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Trainer(settings("async", 10, 4), Algorithm.RING, QUIET));
        assertTrue(e.getMessage().contains("--mode async"), e.getMessage());
        // The refusal is about async mode alone: the ring trains synchronously.
        assertDoesNotThrow(() -> new Trainer(settings("sync", 10, 4), Algorithm.RING, QUIET));
    }
}
