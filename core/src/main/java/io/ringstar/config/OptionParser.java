package io.ringstar.config;

import io.ringstar.InvalidConfigException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Turns an option's text into a typed value, and says in words what text it accepts. Immutable and
 * thread-safe. A {@link ConfigOption} holds one; its {@link ConfigOption#parse} turns a refusal into
 * an {@link InvalidConfigException} that names the option, the text, {@link #allowed()} and where
 * the text came from, so every option fails in the same words.
 *
 * <p>Surrounding white space is ignored by every parser but {@link #text()}.
 *
 * @param <T> the type of the value
 */
public final class OptionParser<T> {
    private final String placeholder;
    private final String allowed;
    private final Function<String, T> parse;

    private OptionParser(String placeholder, String allowed, Function<String, T> parse) {
        this.placeholder = placeholder;
        this.allowed = allowed;
        this.parse = parse;
    }

    /**
     * A parser of values of a type this class does not know: {@code parse} throws
     * {@link IllegalArgumentException} for text that is not {@code allowed}.
     *
     * @param placeholder a short name for the value in help texts
     * @param allowed what text is allowed, in words
     */
    public static <T> OptionParser<T> of(String placeholder, String allowed, Function<String, T> parse) {
        return new OptionParser<>(placeholder, allowed, Objects.requireNonNull(parse, "parse"));
    }

    /** Any non-empty text, kept as given. */
    public static OptionParser<String> text() {
        return new OptionParser<>("TEXT", "non-empty text", text -> require(text, !text.isEmpty()));
    }

    /** A file system path, not blank. */
    public static OptionParser<Path> path() {
        return new OptionParser<>("PATH", "a path", text -> Path.of(require(text, !text.isBlank()).trim()));
    }

    /** A whole number from {@code min} to {@code max}. */
    public static OptionParser<Integer> intIn(int min, int max) {
        return new OptionParser<>("N", "a whole number from " + min + " to " + max,
                text -> (int) within(Long.parseLong(text.trim()), min, max));
    }

    /** A whole number of at least 1. */
    public static OptionParser<Integer> positiveInt() {
        return new OptionParser<>("N", "a whole number of at least 1",
                text -> (int) within(Long.parseLong(text.trim()), 1, Integer.MAX_VALUE));
    }

    /**
     * A size in bytes from {@code min} to {@code max}, as people type them: {@code 65536},
     * {@code 64K}, {@code 16M}, {@code 1G} (binary multiples, K = 1024; a trailing {@code B} or
     * {@code iB} is accepted too).
     */
    public static OptionParser<Integer> byteSize(int min, int max) {
        return new OptionParser<>("BYTES", "a size in bytes from " + ByteSize.format(min) + " to "
                + ByteSize.format(max)
                + " (for example 65536, 64K, 16M)", text -> (int) within(ByteSize.parse(text), min, max));
    }

    /**
     * A duration from {@code min} to {@code max}: a number in {@code plainUnit}, or a number with
     * a unit ({@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}).
     */
    public static OptionParser<Duration> duration(ChronoUnit plainUnit, Duration min, Duration max) {
        return new OptionParser<>("DURATION", "a duration from " + formatDuration(min) + " to " + formatDuration(max)
                + " (a number of " + plainUnit.toString().toLowerCase(Locale.ROOT) + ", or with a unit: 500ms, 10s, 2m,"
                + " 1h)", text -> {
                    Duration value = parseDuration(text, plainUnit);
                    require(text, value.compareTo(min) >= 0 && value.compareTo(max) <= 0);
                    return value;
                });
    }

    /** {@code true} or {@code false} (also {@code yes}/{@code no}, {@code on}/{@code off}), in any case. */
    public static OptionParser<Boolean> bool() {
        Map<String, Boolean> names = new LinkedHashMap<>();
        names.put("true", true);
        names.put("false", false);
        OptionParser<Boolean> plain = choice(names);
        return new OptionParser<>(plain.placeholder, plain.allowed, text -> switch (text.trim().toLowerCase(
                Locale.ROOT)) {
                case "yes", "on" -> true;
                case "no", "off" -> false;
                default -> plain.parse(text);
            });
    }

    /** One of {@code names}, in any case; the value is the name as declared. */
    public static OptionParser<String> choice(String... names) {
        Map<String, String> byName = new LinkedHashMap<>();
        for (String name : names) {
            byName.put(name, name);
        }
        return choice(byName);
    }

    /**
     * One of the names of {@code valuesByName} (in any case), the value being the one it maps to;
     * {@link #allowed()} lists the names in the map's order.
     */
    public static <T> OptionParser<T> choice(Map<String, T> valuesByName) {
        Map<String, T> lowerCase = new LinkedHashMap<>();
        valuesByName.forEach((name, value) -> lowerCase.put(name.toLowerCase(Locale.ROOT), value));
        String names = String.join(", ", valuesByName.keySet());
        int lastComma = names.lastIndexOf(", ");
        String spoken = lastComma < 0 ? names : names.substring(0, lastComma) + " or " + names.substring(lastComma + 2);
        return new OptionParser<>(String.join("|", valuesByName.keySet()), spoken, text -> {
            T value = lowerCase.get(text.trim().toLowerCase(Locale.ROOT));
            return require(value, value != null);
        });
    }

    /**
     * This parser with one more condition on the value; {@link #allowed()} gains
     * {@code " and " + requirement}.
     */
    public OptionParser<T> and(Predicate<? super T> check, String requirement) {
        Objects.requireNonNull(check, "check");
        return new OptionParser<>(placeholder, allowed + " and " + requirement, text -> {
            T value = parse.apply(text);
            return require(value, check.test(value));
        });
    }

    /** This parser with its placeholder in help texts ({@code PEM}, {@code HOST}) replaced. */
    public OptionParser<T> named(String newPlaceholder) {
        return new OptionParser<>(newPlaceholder, allowed, parse);
    }

    /**
     * The value of {@code text}.
     *
     * @throws IllegalArgumentException if the text is not allowed (see {@link #allowed()}); use
     *     {@link ConfigOption#parse} for an error that names the option
     */
    public T parse(String text) {
        Objects.requireNonNull(text, "text");
        try {
            return parse.apply(text);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new IllegalArgumentException("'" + text + "' is not " + allowed, e);
        }
    }

    /** What text is allowed, in words: {@code "a whole number from 0 to 65535"}. */
    public String allowed() {
        return allowed;
    }

    /** A short name for the value in help texts: {@code N}, {@code BYTES}, {@code crc32c|none}. */
    public String placeholder() {
        return placeholder;
    }

    private static <V> V require(V value, boolean allowed) {
        if (!allowed) {
            throw new IllegalArgumentException("not allowed");
        }
        return value;
    }

    private static long within(long value, long min, long max) {
        return require(value, value >= min && value <= max);
    }


    private static Duration parseDuration(String text, ChronoUnit plainUnit) {
        String trimmed = text.trim().toLowerCase(Locale.ROOT);
        int digits = 0;
        while (digits < trimmed.length() && Character.isDigit(trimmed.charAt(digits))) {
            digits++;
        }
        long number = Long.parseLong(trimmed.substring(0, digits));
        ChronoUnit unit = switch (trimmed.substring(digits).trim()) {
            case "" -> plainUnit;
            case "ms" -> ChronoUnit.MILLIS;
            case "s" -> ChronoUnit.SECONDS;
            case "m", "min" -> ChronoUnit.MINUTES;
            case "h" -> ChronoUnit.HOURS;
            default -> throw new IllegalArgumentException("unknown unit");
        };
        return Duration.of(number, unit);
    }


    private static String formatDuration(Duration duration) {
        long millis = duration.toMillis();
        if (millis % 3_600_000 == 0) {
            return millis / 3_600_000 + "h";
        }
        if (millis % 60_000 == 0) {
            return millis / 60_000 + "m";
        }
        return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
    }
}
