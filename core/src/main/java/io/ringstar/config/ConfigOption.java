package io.ringstar.config;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transports;
import java.util.Objects;
import java.util.Optional;

/**
 * One option of a {@link DistributedConfig}, declared once by the code that reads it: its name
 * (the key of {@link DistributedConfig#options()}), its command-line flag and environment variable
 * if it has them, its default, its parser and one line of documentation. Core declares the options
 * every aggregator reads ({@link AggregatorOptions}) and those every network transport reads
 * ({@link io.ringstar.config.NetworkOptions}); each transport publishes its own through
 * {@link io.ringstar.spi.TransportProvider#options()}. {@link ConfigSources} reads flags and
 * environment variables for them, {@link Transports#options(String)} lists them, and
 * {@link Transports#open} refuses an option that none of them declares.
 *
 * <pre>{@code
 * static final ConfigOption<Integer> IO_THREADS = ConfigOption.builder("ioThreads", OptionParser.positiveInt())
 *         .defaultValue(1).description("Netty event-loop threads for forming the group and the listener").build();
 * int threads = IO_THREADS.value(config);
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 *
 * @param <T> the type of the value
 */
public final class ConfigOption<T> {
    /** Where a value read from a {@link DistributedConfig} came from, in error messages. */
    public static final String FROM_CONFIGURATION = "the configuration's options";

    private final String name;
    private final String flag;
    private final String environmentVariable;
    private final OptionParser<T> parser;
    private final T defaultValue;
    private final String defaultText;
    private final String description;
    private final boolean sensitive;

    private ConfigOption(Builder<T> builder) {
        this.name = builder.name;
        this.flag = builder.flag;
        this.environmentVariable = builder.environmentVariable;
        this.parser = builder.parser;
        this.defaultValue = builder.defaultValue;
        this.defaultText = builder.defaultText != null ? builder.defaultText
                : builder.defaultValue != null ? String.valueOf(builder.defaultValue) : "none";
        this.description = builder.description;
        this.sensitive = builder.sensitive;
    }

    /** Starts the declaration of option {@code name}, whose text {@code parser} reads. */
    public static <T> Builder<T> builder(String name, OptionParser<T> parser) {
        return new Builder<>(name, parser);
    }

    /** The option's name, its key in {@link DistributedConfig#options()}: {@code "aeron.mtu"}. */
    public String name() {
        return name;
    }

    /** Its command-line flag without the leading {@code --} ({@code "tls-cert"}), if it has one. */
    public Optional<String> flag() {
        return Optional.ofNullable(flag);
    }

    /** The environment variable {@link ConfigSources} reads it from ({@code "RINGSTAR_TLS_CERT"}), if any. */
    public Optional<String> environmentVariable() {
        return Optional.ofNullable(environmentVariable);
    }

    /** How its text becomes a value, and what text is allowed. */
    public OptionParser<T> parser() {
        return parser;
    }

    /** Its default, if it has a fixed one (some depend on other values; {@link #defaultText()} says how). */
    public Optional<T> defaultValue() {
        return Optional.ofNullable(defaultValue);
    }

    /** Its default in words: {@code "1"}, {@code "none"}, {@code "the collective timeout"}. */
    public String defaultText() {
        return defaultText;
    }

    /** One line saying what it does. */
    public String description() {
        return description;
    }

    /** Whether its value is secret: error messages and {@link DistributedConfig#toString()} hide it. */
    public boolean sensitive() {
        return sensitive;
    }

    /**
     * The value of {@code text}, which came from {@code origin}.
     *
     * @param origin where the text came from ({@code "--checksum"}, {@code "RINGSTAR_CHECKSUM"},
     *     {@link #FROM_CONFIGURATION}), named in the error
     * @throws InvalidConfigException naming this option, the text (hidden if {@link #sensitive()}),
     *     what is allowed and the origin
     */
    public T parse(String text, String origin) {
        try {
            return parser.parse(text);
        } catch (IllegalArgumentException e) {
            throw refuse(text, "must be " + parser.allowed(), origin);
        }
    }

    /**
     * An error about this option's {@code text}, in the format every option uses; for checks that
     * involve other values than this option's own ({@code aeron.chunkBytes} against the term length).
     */
    public InvalidConfigException refuse(String text, String requirement, String origin) {
        return new InvalidConfigException("option " + name, sensitive ? "(hidden)" : text, requirement, origin);
    }

    /**
     * The value {@code config} gives this option, if it gives one.
     *
     * @throws InvalidConfigException if the value given is not allowed
     */
    public Optional<T> ifSet(DistributedConfig config) {
        return config.option(name).map(text -> parse(text, FROM_CONFIGURATION));
    }

    /**
     * The value {@code config} gives this option, else its default.
     *
     * @throws InvalidConfigException if the value given is not allowed
     * @throws IllegalStateException if it is unset and this option has no fixed default (use
     *     {@link #valueOr} or {@link #ifSet})
     */
    public T value(DistributedConfig config) {
        return ifSet(config).orElseGet(() -> {
            if (defaultValue == null) {
                throw new IllegalStateException("option " + name + " has no fixed default");
            }
            return defaultValue;
        });
    }

    /**
     * The value {@code config} gives this option, else {@code fallback} (for defaults that depend
     * on other values).
     *
     * @throws InvalidConfigException if the value given is not allowed
     */
    public T valueOr(DistributedConfig config, T fallback) {
        return ifSet(config).orElse(fallback);
    }

    /**
     * One line of help: {@code tls.cert (--tls-cert, RINGSTAR_TLS_CERT) PEM: this rank's certificate
     * chain; default none}.
     */
    public String help() {
        StringBuilder line = new StringBuilder(name);
        if (flag != null || environmentVariable != null) {
            line.append(" (");
            if (flag != null) {
                line.append("--").append(flag);
            }
            if (environmentVariable != null) {
                line.append(flag != null ? ", " : "").append(environmentVariable);
            }
            line.append(')');
        }
        return line.append(' ').append(parser.placeholder()).append(": ").append(description).append("; default ")
                .append(defaultText).toString();
    }

    /** The option's name. */
    @Override
    public String toString() {
        return name;
    }

    /** Collects one option's declaration; {@link #build()} checks that it has a description. Not thread-safe. */
    public static final class Builder<T> {
        private final String name;
        private final OptionParser<T> parser;
        private String flag;
        private String environmentVariable;
        private T defaultValue;
        private String defaultText;
        private String description;
        private boolean sensitive;

        private Builder(String name, OptionParser<T> parser) {
            if (name == null || name.isBlank() || name.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("an option's name must be one word, was '" + name + "'");
            }
            this.name = name;
            this.parser = Objects.requireNonNull(parser, "parser");
        }

        /** Its command-line flag, without the leading {@code --}. */
        public Builder<T> flag(String newFlag) {
            this.flag = newFlag;
            return this;
        }

        /** The environment variable {@link ConfigSources} reads it from. */
        public Builder<T> environmentVariable(String variable) {
            this.environmentVariable = variable;
            return this;
        }

        /** Its fixed default; {@link #defaultText} defaults to its text. */
        public Builder<T> defaultValue(T value) {
            this.defaultValue = value;
            return this;
        }

        /** Its default in words, for defaults that depend on other values or read better so ({@code 64M}). */
        public Builder<T> defaultText(String text) {
            this.defaultText = text;
            return this;
        }

        /** One line saying what it does, without a final full stop. */
        public Builder<T> description(String text) {
            this.description = text;
            return this;
        }

        /** Marks its value as secret, never to be printed. */
        public Builder<T> sensitive() {
            this.sensitive = true;
            return this;
        }

        /** The declaration. */
        public ConfigOption<T> build() {
            if (description == null || description.isBlank()) {
                throw new IllegalArgumentException("option " + name + " needs a description");
            }
            return new ConfigOption<>(this);
        }
    }
}
