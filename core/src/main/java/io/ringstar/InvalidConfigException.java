package io.ringstar;

/**
 * A configuration value is out of range, malformed, or names an option nothing declares; raised
 * before any connection is made. The message names the field or option, the value, what is allowed
 * and, where it is known, where the value came from: {@code option aeron.mtu = 1000 (from --option
 * aeron.mtu): must be a whole number from 64 to 65504 and a multiple of 32}.
 */
public class InvalidConfigException extends CollectiveException {
    private final String field;
    private final String value;
    private final String requirement;
    private final String origin;

    /**
     * @param field what was configured ({@code "worldSize"}, {@code "option aeron.mtu"})
     * @param value the value that was refused
     * @param requirement what is allowed, or what to do instead
     */
    public InvalidConfigException(String field, Object value, String requirement) {
        this(field, value, requirement, null);
    }

    /**
     * @param field what was configured ({@code "worldSize"}, {@code "option aeron.mtu"})
     * @param value the value that was refused
     * @param requirement what is allowed, or what to do instead
     * @param origin where the value came from ({@code "--checksum"}, {@code "RINGSTAR_TLS_CERT"},
     *     {@code "the configuration"}), or null if unknown
     */
    public InvalidConfigException(String field, Object value, String requirement, String origin) {
        super("configure", NO_RANK, NO_RANK, field + " = " + value + (origin == null ? "" : " (from " + origin + ")")
                + ": " + requirement);
        this.field = field;
        this.value = String.valueOf(value);
        this.requirement = requirement;
        this.origin = origin;
    }

    /** What was configured, for example {@code "option aeron.mtu"} or {@code "worldSize"}. */
    public String field() {
        return field;
    }

    /** The refused value as text ({@code "(hidden)"} for a secret). */
    public String value() {
        return value;
    }

    /** What is allowed, or what to do instead. */
    public String requirement() {
        return requirement;
    }

    /** Where the value came from, or null if unknown. */
    public String origin() {
        return origin;
    }
}
