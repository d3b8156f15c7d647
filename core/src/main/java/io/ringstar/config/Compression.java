package io.ringstar.config;

import java.util.Locale;
import java.util.Objects;

/**
 * How gradients are compressed on the wire: the value of option {@code compression} of
 * {@link io.ringstar.ParameterServer}, {@link io.ringstar.AllReduceAggregator} and the
 * {@link io.ringstar.Communicator}'s all-reduce. Immutable.
 *
 * <ul>
 *   <li>{@code none}: values go as they are (the default);</li>
 *   <li>{@code fp16}, {@code bf16}: floating-point values go as IEEE binary16 or bfloat16 and are
 *       summed in float32;</li>
 *   <li>{@code topk:F}: only the fraction {@code F} (in (0, 1]) of elements largest in magnitude
 *       go, as index and value pairs; the rest is kept on the rank and added to the next call's
 *       values (error feedback).</li>
 * </ul>
 * Every rank must use the same setting: it travels in every message header, and a rank whose
 * setting differs fails with a mismatch.
 *
 * @param kind which compression
 * @param fraction for {@link Kind#TOPK}, the fraction of elements sent, in (0, 1]; 0 otherwise
 */
public record Compression(Kind kind, double fraction) {
    /** No compression. */
    public static final Compression NONE = new Compression(Kind.NONE, 0);
    /** The text of option {@code compression} for top-k, before the fraction. */
    public static final String TOPK_PREFIX = "topk:";

    /** The kinds of compression, with their code on the wire. */
    public enum Kind {
        NONE(0, "none"), FP16(1, "fp16"), BF16(2, "bf16"), TOPK(3, "topk");

        private final int wireCode;
        private final String text;

        Kind(int wireCode, String text) {
            this.wireCode = wireCode;
            this.text = text;
        }

        /** The code in a message header's compression byte. */
        public int wireCode() {
            return wireCode;
        }
    }

    /** Checks the fraction against the kind. */
    public Compression {
        Objects.requireNonNull(kind, "kind");
        if (kind == Kind.TOPK ? !(fraction > 0 && fraction <= 1) : fraction != 0) {
            throw new IllegalArgumentException("compression " + kind.text + ": fraction " + fraction
                    + (kind == Kind.TOPK ? " is not in (0, 1]" : " must be 0"));
        }
    }

    /**
     * The setting of option text {@code none}, {@code fp16}, {@code bf16} or {@code topk:F}.
     *
     * @throws IllegalArgumentException for any other text, or a fraction outside (0, 1]
     */
    public static Compression parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith(TOPK_PREFIX)) {
            double fraction;
            try {
                fraction = Double.parseDouble(t.substring(TOPK_PREFIX.length()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("the fraction of " + text + " is not a number", e);
            }
            return new Compression(Kind.TOPK, fraction);
        }
        for (Kind kind : Kind.values()) {
            if (kind != Kind.TOPK && kind.text.equals(t)) {
                return new Compression(kind, 0);
            }
        }
        throw new IllegalArgumentException("unknown compression " + text);
    }

    /** What the option's text says, in words, for error messages and help. */
    public static String allowed() {
        return "none, fp16, bf16 or topk:F with F in (0, 1]";
    }

    /** The 32 bits of a message header's compression parameter: the fraction as a float, 0 without one. */
    public int wireParameter() {
        return kind == Kind.TOPK ? Float.floatToIntBits((float) fraction) : 0;
    }

    /** Describes the setting of a header's code and parameter, for a mismatch message. */
    public static String describe(int wireCode, int wireParameter) {
        for (Kind kind : Kind.values()) {
            if (kind.wireCode == wireCode) {
                return kind == Kind.TOPK ? TOPK_PREFIX + Float.intBitsToFloat(wireParameter) : kind.text;
            }
        }
        return "unknown compression " + wireCode;
    }

    /** The option's text for this setting. */
    @Override
    public String toString() {
        return kind == Kind.TOPK ? TOPK_PREFIX + fraction : kind.text;
    }
}
