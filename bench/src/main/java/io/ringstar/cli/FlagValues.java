package io.ringstar.cli;

import io.ringstar.config.ByteSize;
import io.ringstar.ranks.Algorithm;
import io.ringstar.train.convnet.ConvNetRun;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks of the values picocli parsed that picocli's types cannot express: ranges, sizes with
 * suffixes and fixed choices. Every problem is a {@link UsageException} that names the flag and the
 * value, so the user sees exactly what to change.
 */
public final class FlagValues {
    /** The value of {@code --algorithm} that picks all three runs of the ConvNet: ps and ring in step, then async. */
    public static final String ALL = "all";

    private FlagValues() {
    }

    /** {@code value} in {@code [min, max]}, or {@code defaultValue} when the flag was not given ({@code null}). */
    public static int integer(String flag, Integer value, int defaultValue, int min, int max) throws UsageException {
        if (value == null) {
            return defaultValue;
        }
        if (value < min || value > max) {
            throw new UsageException(flag + " must be in [" + min + ", " + max + "], was " + value);
        }
        return value;
    }

    /**
     * The size in bytes that {@code text} gives ({@link ByteSize} syntax), in {@code [min, max]}, or
     * {@code defaultValue} when the flag was not given ({@code null}).
     */
    public static long byteSize(String flag, String text, long defaultValue, long min, long max)
            throws UsageException {
        if (text == null) {
            return defaultValue;
        }
        long value;
        try {
            value = ByteSize.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException(flag + ": " + e.getMessage());
        }
        if (value < min || value > max) {
            throw new UsageException(flag + " must be between " + ByteSize.format(min) + " and "
                    + ByteSize.format(max) + ", was " + text);
        }
        return value;
    }

    /** {@code text}, which must be one of {@code choices}, or {@code defaultValue} when it is {@code null}. */
    public static String choice(String flag, String text, String defaultValue, List<String> choices)
            throws UsageException {
        String value = text == null ? defaultValue : text;
        if (!choices.contains(value)) {
            throw new UsageException(flag + " must be one of " + String.join("|", choices) + ", was '" + value + "'");
        }
        return value;
    }

    /**
     * The aggregators that {@link Algorithm#FLAG} picks: {@code given} ({@code null} when the flag is
     * absent, then {@code defaultChoice}) is one aggregator's label, or {@link Algorithm#BOTH} for both
     * of them (ps, then ring); with {@code communicator} also {@link Algorithm#COMM}'s label, which
     * picks the communicator alone. {@code bench} and {@code train} parse it here so that they accept
     * the same values and say the same thing about a wrong one.
     *
     * @throws UsageException if the value is none of those
     */
    public static List<Algorithm> algorithms(String given, String defaultChoice, boolean communicator)
            throws UsageException {
        List<String> choices = new ArrayList<>(List.of(Algorithm.PS.label(), Algorithm.RING.label(), Algorithm.BOTH));
        if (communicator) {
            choices.add(Algorithm.COMM.label());
        }
        String text = choice(Algorithm.FLAG, given, defaultChoice, choices);
        return text.equals(Algorithm.BOTH) ? List.of(Algorithm.PS, Algorithm.RING) : List.of(Algorithm.of(text));
    }

    /**
     * The runs of {@code train --model convnet} that {@link Algorithm#FLAG} picks: {@code given}
     * ({@code null} when the flag is absent) is ps, ring, both or {@value #ALL} (ps, ring, then the
     * async server, each from the same start; the default). With one rank ({@code alone}), all is
     * ps and ring: the asynchronous server needs a server and a worker.
     *
     * @throws UsageException for another value, more than ps with async mode, or async mode alone
     */
    public static List<ConvNetRun> convNetRuns(String given, boolean async, boolean alone) throws UsageException {
        if (async && alone) {
            throw new UsageException("--mode async needs at least 2 ranks: a server and a worker");
        }
        String choice = choice(Algorithm.FLAG, given, async ? Algorithm.PS.label() : ALL,
                List.of(Algorithm.PS.label(), Algorithm.RING.label(), Algorithm.BOTH, ALL));
        List<ConvNetRun> runs = switch (choice) {
            // One rank has no one to serve it: all is then ps and ring, rather than a third run labelled async.
            case ALL -> alone ? List.of(ConvNetRun.PS, ConvNetRun.RING)
                    : List.of(ConvNetRun.PS, ConvNetRun.RING, ConvNetRun.ASYNC);
            case Algorithm.BOTH -> List.of(ConvNetRun.PS, ConvNetRun.RING);
            case "ring" -> List.of(ConvNetRun.RING);
            default -> List.of(async ? ConvNetRun.ASYNC : ConvNetRun.PS);
        };
        if (async && !runs.equals(List.of(ConvNetRun.ASYNC))) {
            throw new UsageException("--mode async is the parameter server's alone (--algorithm ps); --algorithm "
                    + ALL + " (without --mode) runs ps, ring and then ps async");
        }
        return runs;
    }
}
