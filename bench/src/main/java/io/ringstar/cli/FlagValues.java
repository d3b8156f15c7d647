package io.ringstar.cli;

import io.ringstar.config.ByteSize;
import io.ringstar.ranks.Algorithm;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks of the values picocli parsed that picocli's types cannot express: ranges, sizes with
 * suffixes and fixed choices. Every problem is a {@link UsageException} that names the flag and the
 * value, so the user sees exactly what to change.
 */
public final class FlagValues {
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
}
