package io.ringstar.config;

import io.ringstar.DistributedConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The options of ringstar's observability, read by every communicator and aggregator whatever the
 * transport: the flight recorder's length ({@value #TRACE_ENTRIES_OPTION}), where ranks write their
 * trace dumps ({@value #TRACE_DIR_OPTION}) and when a waiting collective warns
 * ({@value #STALL_WARNING_OPTION}). Part of core's options ({@link AggregatorOptions#ALL}).
 */
public final class TraceOptions {
    /** Option: how many of its last collectives each rank keeps in its flight recorder; 0 turns it off. */
    public static final String TRACE_ENTRIES_OPTION = "traceEntries";
    /** The default of {@value #TRACE_ENTRIES_OPTION}, as PyTorch's flight recorder keeps. */
    public static final int DEFAULT_TRACE_ENTRIES = 2000;
    /**
     * The most entries a flight recorder keeps: about 70 bytes each in memory and 320 in a dump,
     * which is made in memory when the rank fails.
     */
    public static final int MAX_TRACE_ENTRIES = 100_000;
    /** Option: the directory each rank writes its flight recorder to on its first failure. */
    public static final String TRACE_DIR_OPTION = "traceDir";
    /**
     * Option: how long a collective waits before every waiting rank warns, once, naming the ranks
     * that have not reached it; a duration, or {@value #OFF}. Default a quarter of the timeout.
     */
    public static final String STALL_WARNING_OPTION = "stallWarning";
    /** {@value #STALL_WARNING_OPTION}: never warn. */
    public static final String OFF = "off";

    /** {@value #TRACE_ENTRIES_OPTION}. */
    public static final ConfigOption<Integer> TRACE_ENTRIES = ConfigOption.builder(TRACE_ENTRIES_OPTION,
                    OptionParser.intIn(0, MAX_TRACE_ENTRIES))
            .defaultValue(DEFAULT_TRACE_ENTRIES)
            .description("how many of its last collectives each rank keeps for a trace dump; 0 keeps none")
            .build();
    /** {@value #TRACE_DIR_OPTION}: flag {@code --trace-dir}, variable {@code RINGSTAR_TRACE_DIR}. */
    public static final ConfigOption<Path> TRACE_DIR = ConfigOption.builder(TRACE_DIR_OPTION, OptionParser.path())
            .flag("trace-dir").environmentVariable("RINGSTAR_TRACE_DIR").defaultText("none: no dumps")
            .description("each rank writes its last collectives there as JSON on its first failure "
                    + "(read them with ringstar report hang)")
            .build();
    /** {@value #STALL_WARNING_OPTION}: a duration, or off; zero duration stands for off. */
    public static final ConfigOption<Duration> STALL_WARNING = ConfigOption.builder(STALL_WARNING_OPTION,
                    stallWarnings())
            .flag("stall-warning").environmentVariable("RINGSTAR_STALL_WARNING")
            .defaultText("a quarter of the timeout")
            .description("after a collective waited this long, each waiting rank warns once, naming the ranks "
                    + "that have not reached it; off for never")
            .build();
    /** Every option above, in the order help lists them. */
    public static final List<ConfigOption<?>> ALL = List.of(TRACE_ENTRIES, TRACE_DIR, STALL_WARNING);

    private TraceOptions() {
    }

    /** The stall warning's threshold for {@code config}, or empty when it is off. */
    public static Optional<Duration> stallWarning(DistributedConfig config) {
        Duration value = STALL_WARNING.ifSet(config).orElse(config.timeout().dividedBy(4));
        return value.isZero() ? Optional.empty() : Optional.of(value);
    }

    private static OptionParser<Duration> stallWarnings() {
        OptionParser<Duration> duration = OptionParser.duration(ChronoUnit.SECONDS, Duration.ofMillis(1),
                Duration.ofDays(1));
        return OptionParser.of("DURATION|off", duration.allowed() + ", or off",
                text -> text.trim().toLowerCase(Locale.ROOT).equals(OFF) ? Duration.ZERO
                        : duration.parse(text));
    }
}
