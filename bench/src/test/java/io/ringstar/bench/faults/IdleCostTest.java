package io.ringstar.bench.faults;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.testing.ChildProcess;
import io.ringstar.testing.RankMain;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a rank costs while it waits: three rank processes, of which rank 2 stops between two
 * calls (a long compute step), so ranks 0 and 1 wait inside their next all-reduce for it (a slow
 * peer), and rank 2 waits in no call at all while its background reader keeps reading. Over a few
 * seconds of that, each process (its media driver included, for Aeron) must use under a tenth of a
 * core. Resumed, the job finishes normally. A measurement of CPU time, not of speed: a rank that
 * spun while it waited would use a whole core.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class IdleCostTest {
    private static final int WORLD_SIZE = 3;
    /** The window the CPU time is measured over, once every rank has waited for a while. */
    private static final Duration WINDOW = Duration.ofSeconds(3);
    private static final Duration SETTLE = Duration.ofMillis(500);
    /** The most of one core a waiting rank may use. */
    private static final double MAX_CORE_SHARE = 0.10;
    private static final Duration LONG = Duration.ofSeconds(30);

    private FaultJob job;

    @BeforeEach
    void newJob(TestInfo test) {
        job = new FaultJob("idle-" + test.getDisplayName().replaceAll("[^A-Za-z0-9]+", "-"));
    }

    @AfterEach
    void nothingLeftBehind() {
        job.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netty", "aeron"})
    void aWaitingRankUsesUnderATenthOfACore(String transport) throws InterruptedException {
        int sleeper = 2;
        List<ChildProcess> ranks = job.startRanks("r", WORLD_SIZE, List.of());
        String coordinator = FaultJob.coordinator();
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            Map<String, Object> settings = FaultJob.rankSettings(transport, rank, WORLD_SIZE, coordinator, LONG,
                    "idle");
            settings.put("algorithms", "ring,ps");
            settings.put("iterations", 20);
            settings.put("report-every", 1);
            if (rank == sleeper) {
                settings.put("pause-after", 5);
            }
            FaultJob.run(ranks.get(rank), settings);
        }
        ranks.get(sleeper).awaitPrefix("PAUSED " + sleeper + " ", LONG);
        Thread.sleep(SETTLE.toMillis());
        long[] before = new long[WORLD_SIZE];
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            before[rank] = ranks.get(rank).cpuTicks();
        }
        long start = System.nanoTime();
        Thread.sleep(WINDOW.toMillis());
        double seconds = (System.nanoTime() - start) / 1e9;
        StringBuilder report = new StringBuilder();
        double worst = 0;
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            // Clock ticks are hundredths of a second on Linux.
            double share = (ranks.get(rank).cpuTicks() - before[rank]) / 100.0 / seconds;
            worst = Math.max(worst, share);
            report.append(String.format(" rank %d %.1f%%%s", rank, 100 * share,
                    rank == sleeper ? " (between calls)" : " (waiting in a call)"));
        }
        System.out.printf("[idle] %s over %.1f s:%s%n", transport, seconds, report);
        ranks.get(sleeper).send("RESUME");
        for (int rank = 0; rank < WORLD_SIZE; rank++) {
            ranks.get(rank).awaitPrefix("OK " + rank + " ", LONG);
            job.awaitExit(ranks.get(rank), RankMain.EXIT_OK, LONG);
        }
        assertTrue(worst < MAX_CORE_SHARE, transport + ": a waiting rank used more than "
                + (int) (100 * MAX_CORE_SHARE) + "% of a core:" + report);
    }
}
