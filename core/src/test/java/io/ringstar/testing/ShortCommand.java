package io.ringstar.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A short external command (ss, ip, kill) run to its end within a time limit. Its output goes to
 * a file rather than a pipe, so that waiting for the process, not reading its output, is what the
 * limit bounds: a command that hangs with its output open cannot hold the test.
 */
public final class ShortCommand {
    /** A command's exit status and what it printed on stdout and stderr. */
    public record Result(int exitStatus, String output) {
        public boolean succeeded() {
            return exitStatus == 0;
        }
    }

    private ShortCommand() {
    }

    /**
     * Runs {@code command} with no input and waits at most {@code limit} for it to end.
     *
     * @throws UncheckedIOException if it cannot be started
     * @throws AssertionError if it is still running after {@code limit} (it is killed)
     */
    public static Result run(List<String> command, Duration limit) {
        Path output = null;
        try {
            output = Files.createTempFile("ringstar-command-", ".out");
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(output.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(command + " did not end within " + limit);
            }
            return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + command, e);
        } finally {
            if (output != null) {
                try {
                    Files.deleteIfExists(output);
                } catch (IOException ignored) {
                    // a temporary file left behind harms nothing
                }
            }
        }
    }
}
