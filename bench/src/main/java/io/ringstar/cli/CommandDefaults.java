package io.ringstar.cli;

import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * What the commands that run ranks ({@code bench}, {@code train}) share: the world size and
 * timeout they assume when no flag or variable gives one, and {@value #VERBOSE}, which puts a
 * failed rank's stack trace on the terminal (see {@link FailureReport}).
 */
final class CommandDefaults {
    /** The world size when every rank is a thread here and {@code --world-size} is absent. */
    static final int WORLD_SIZE = 4;
    /** The bound of every wait when neither {@code --timeout} nor {@code RINGSTAR_TIMEOUT} gives one. */
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** The flag that shows stack traces on the terminal instead of only in the log. */
    static final String VERBOSE = "--verbose";

    private CommandDefaults() {
    }

    /** Adds {@value #VERBOSE} to a command. */
    static void declareVerbose(CommandSpec spec) {
        spec.addOption(OptionSpec.builder(VERBOSE).type(boolean.class).arity("0")
                .description("on a failure, print each failed rank's stack trace too (otherwise it goes to the"
                        + " java.util.logging log at FINE, and the terminal gets one line per rank)")
                .build());
    }

    /** Whether {@code spec} has {@value #VERBOSE} and it was given. */
    static boolean verbose(CommandSpec spec) {
        OptionSpec verbose = spec.findOption(VERBOSE);
        return verbose != null && Boolean.TRUE.equals(verbose.getValue());
    }
}
