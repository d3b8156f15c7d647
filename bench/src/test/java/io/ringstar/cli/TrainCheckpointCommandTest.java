package io.ringstar.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The checkpoint flags of {@code train} on the command line: usage errors, refusals before connecting, a resume. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TrainCheckpointCommandTest {
    private final CapturedOutput output = new CapturedOutput();

    @TempDir
    Path dir;

    private int run(String... args) {
        output.reset();
        return output.run(Main.standard(Map.of()), args);
    }

    private String out() {
        return output.out();
    }

    private String err() {
        return output.err();
    }

    /** A small train command line; checkpoints every 10 steps into {@code checkpoints} unless it is null. */
    private static String[] train(Path checkpoints, String... extra) {
        List<String> args = new ArrayList<>(List.of("train", "--world-size", "3", "--transport", "inproc",
                "--algorithm", "ps", "--model", "softmax", "--log-every", "10", "--batch-size", "60",
                "--samples", "2000", "--eval-size", "400", "--features", "16"));
        if (checkpoints != null) {
            args.addAll(List.of("--checkpoint-dir", checkpoints.toString(), "--checkpoint-every", "10"));
        }
        args.addAll(List.of(extra));
        return args.toArray(String[]::new);
    }

    private String digest() {
        Matcher matcher = Pattern.compile("train done: .*; params sha256 ([0-9a-f]{64})").matcher(out());
        assertTrue(matcher.find(), out());
        return matcher.group(1);
    }

    @Test
    void badCheckpointFlagsAreUsageErrors() {
        assertEquals(2, run("train", "--resume"));
        assertTrue(err().contains("--resume needs --checkpoint-dir"), err());
        assertEquals(2, run("train", "--checkpoint-every", "5"));
        assertTrue(err().contains("--checkpoint-every needs --checkpoint-dir"), err());
        assertEquals(2, run("train", "--checkpoint-dir", dir.toString(), "--checkpoint-every", "0"));
        assertTrue(err().contains("--checkpoint-every must be a positive integer, was 0"), err());
        assertEquals(2, run("train", "--checkpoint-dir", dir.toString(), "--resume=yes"));
        assertTrue(err().contains("'--resume' should be specified without 'yes'"), err());
        assertEquals(2, run("train", "--checkpoint-dir", dir.toString(), "--resume", "--resume"));
        assertTrue(err().contains("--resume is given more than once"), err());
    }

    @Test
    void aResumeOfAnotherRunStopsBeforeConnectingAndTheSameRunResumesToTheSameParameters() {
        assertEquals(0, run(train(dir, "--steps", "30")), err());
        String digest = digest();

        assertEquals(2, run(train(dir, "--steps", "30", "--resume", "--lr", "0.1")));
        assertTrue(err().contains("cannot resume from " + dir.resolve("ps").resolve("checkpoint-000000000030.rsck")
                + ": it was saved with lr 0.05, this run has 0.1"), err());
        assertFalse(out().contains("# config:"), "refused before connecting: " + out());

        // Extended to 50 steps: resumes at 30 and, bit for bit, ends where a 50-step run does.
        assertEquals(0, run(train(dir, "--resume", "--steps", "50")), err());
        assertTrue(out().contains("train: resuming ps from step 30 ("), out());
        String extended = digest();
        assertEquals(0, run(train(null, "--steps", "50")), err());
        assertEquals(extended, digest());
        assertFalse(digest.equals(extended), "50 steps end elsewhere than 30");
    }
}
