package io.ringstar.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What a command printed on standard output and standard error, kept for the test to read. */
public final class CapturedOutput {
    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();

    /** Runs {@code args} through {@code main}, adding what it prints to what was captured before. */
    public int run(Main main, String... args) {
        return main.run(args, new PrintStream(outBytes, true, StandardCharsets.UTF_8),
                new PrintStream(errBytes, true, StandardCharsets.UTF_8));
    }

    /** Forgets what was printed so far. */
    public void reset() {
        outBytes.reset();
        errBytes.reset();
    }

    public String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    public String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }
}
