package io.ringstar.cli.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which files of a trace directory are this job's dumps, and what the launcher says of them. */
class TraceDirectoryTest {
    @TempDir
    Path dir;

    private final long launched = System.currentTimeMillis() - 5_000;

    private Path dump(String name, long ageMillis) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, "{}");
        Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() - ageMillis));
        return file;
    }

    private static List<String> names(List<Path> files) {
        return files.stream().map(file -> file.getFileName().toString()).toList();
    }

    @Test
    void onlyThisJobsRanksSinceTheLaunchCount() throws IOException {
        dump("ringstar-my_job-rank1.json", 0);
        dump("ringstar-my_job-rank0.json", 0);
        dump("ringstar-my_job-rank10.json", 0);
        dump("ringstar-my_job-rank2.json", 3_600_000);
        dump("ringstar-other-rank2.json", 0);
        dump("ringstar-my_job-rank2.json.tmp", 0);
        dump("notes.json", 0);
        TraceDirectory mine = new TraceDirectory(dir, "my job");
        // By rank, then name; rank 10 is no rank of 3, the hour-old file an earlier job's, "other" another job.
        assertEquals(List.of("ringstar-my_job-rank0.json", "ringstar-my_job-rank1.json"),
                names(mine.present(3, launched)));
        // A job id the launcher does not know: any job's dumps count.
        assertEquals(List.of("ringstar-my_job-rank0.json", "ringstar-my_job-rank1.json",
                "ringstar-other-rank2.json"),
                names(new TraceDirectory(dir, null).present(3, launched)));
        assertEquals(List.of(), new TraceDirectory(dir.resolve("not-yet"), "my job").present(3, launched));
    }

    @Test
    void theReportNamesTheFilesTheRanksWithoutOneAndTheReader() throws IOException {
        dump("ringstar-ringstar-rank0.json", 0);
        dump("ringstar-ringstar-rank2.json", 0);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new TraceDirectory(dir, "ringstar").report(3, launched, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertEquals("ringstar launch: trace dumps of job 'ringstar' in " + dir + " (2 files; none from ranks [1]):\n"
                + "  ringstar-ringstar-rank0.json\n"
                + "  ringstar-ringstar-rank2.json\n"
                + "ringstar launch: read them with: ringstar report hang " + dir + "\n",
                bytes.toString(StandardCharsets.UTF_8));

        bytes.reset();
        new TraceDirectory(dir, "another").report(3, launched, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertTrue(bytes.toString(StandardCharsets.UTF_8).startsWith("ringstar launch: no rank wrote a trace dump of"
                + " job 'another' to " + dir), bytes.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theWaitEndsOnceEveryRankStillRunningHasWritten() throws IOException {
        dump("ringstar-ringstar-rank0.json", 0);
        dump("ringstar-ringstar-rank1.json", 0);
        TraceDirectory dumps = new TraceDirectory(dir, "ringstar");
        long start = System.nanoTime();
        dumps.await(Set.of(0, 1), 3, launched, Duration.ofSeconds(10));
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos(), "rank 0 and 1 had written");
        start = System.nanoTime();
        dumps.await(Set.of(1, 2), 3, launched, Duration.ofMillis(300));
        long waited = System.nanoTime() - start;
        assertTrue(waited >= Duration.ofMillis(300).toNanos() && waited < Duration.ofSeconds(5).toNanos(),
                "rank 2 never writes: the wait ends at its bound, " + waited + " ns");
    }
}
