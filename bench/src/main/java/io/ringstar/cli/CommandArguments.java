package io.ringstar.cli;

import io.ringstar.bench.ByteSize;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The flags of one command line, {@code --name value} or {@code --name=value}, checked against the
 * flags the command knows. Every problem is a {@link UsageException} that names the flag and the
 * value, so the user sees exactly what to change.
 */
public final class CommandArguments {
    private final Map<String, String> values = new LinkedHashMap<>();

    private CommandArguments() {
    }

    /**
     * Parses {@code args}; every flag takes a value and may be given once.
     *
     * @param known the flags the command accepts, with their leading {@code --}
     */
    public static CommandArguments parse(List<String> args, Collection<String> known) throws UsageException {
        return parse(args, known, List.of());
    }

    /**
     * Parses {@code args} where the {@code switches} (with their leading {@code --}) take no value:
     * given, they read as "true".
     */
    static CommandArguments parse(List<String> args, Collection<String> known, Collection<String> switches)
            throws UsageException {
        CommandArguments parsed = new CommandArguments();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (!arg.startsWith("--")) {
                throw new UsageException("unexpected argument '" + arg + "'; flags start with --");
            }
            String name = arg;
            String value = null;
            int equals = arg.indexOf('=');
            if (equals >= 0) {
                name = arg.substring(0, equals);
                value = arg.substring(equals + 1);
            }
            if (switches.contains(name)) {
                if (value != null) {
                    throw new UsageException("flag " + name + " takes no value, was given '" + value + "'");
                }
                value = "true";
            } else if (!known.contains(name)) {
                throw new UsageException("unknown flag '" + name + "'; known flags: " + String.join(", ", known)
                        + (switches.isEmpty() ? "" : ", " + String.join(", ", switches)));
            }
            if (value == null) {
                if (i + 1 >= args.size()) {
                    throw new UsageException("flag " + name + " needs a value");
                }
                value = args.get(++i);
            }
            if (parsed.values.put(name, value) != null) {
                throw new UsageException("flag " + name + " is given more than once");
            }
        }
        return parsed;
    }

    /**
     * The values of those of {@code names} (written without {@code --}) that were given, keyed
     * without {@code --}, as {@link io.ringstar.ConfigSources#resolve} takes them.
     */
    public Map<String, String> valuesOf(Collection<String> names) {
        Map<String, String> given = new LinkedHashMap<>();
        for (String name : names) {
            String value = values.get("--" + name);
            if (value != null) {
                given.put(name, value);
            }
        }
        return given;
    }

    /** The flag's value, if given. */
    public Optional<String> value(String flag) {
        return Optional.ofNullable(values.get(flag));
    }

    /** The flag's value, or {@code defaultValue}. */
    public String value(String flag, String defaultValue) {
        return values.getOrDefault(flag, defaultValue);
    }

    /** The flag's integer value in {@code [min, max]}, or {@code defaultValue}. */
    public int intValue(String flag, int defaultValue, int min, int max) throws UsageException {
        String text = values.get(flag);
        if (text == null) {
            return defaultValue;
        }
        int value;
        try {
            value = Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " must be a whole number, was '" + text + "'");
        }
        if (value < min || value > max) {
            throw new UsageException(flag + " must be in [" + min + ", " + max + "], was " + value);
        }
        return value;
    }

    /** The flag's size in bytes ({@link ByteSize} syntax) in {@code [min, max]}, or {@code defaultValue}. */
    public long byteSize(String flag, long defaultValue, long min, long max) throws UsageException {
        String text = values.get(flag);
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
            throw new UsageException(flag + " must be between " + ByteSize.format(min) + " and " + ByteSize.format(max)
                    + ", was " + text);
        }
        return value;
    }

    /** The flag's value, which must be one of {@code choices}, or {@code defaultValue}. */
    public String choice(String flag, String defaultValue, List<String> choices) throws UsageException {
        String value = values.getOrDefault(flag, defaultValue);
        if (!choices.contains(value)) {
            throw new UsageException(flag + " must be one of " + String.join("|", choices) + ", was '" + value + "'");
        }
        return value;
    }
}
