package io.ringstar;

/** A configuration value is out of range or malformed; raised before any connection is made. */
public class InvalidConfigException extends CollectiveException {
    public InvalidConfigException(String field, Object value, String requirement) {
        super("configure", NO_RANK, NO_RANK, field + " = " + value + ": " + requirement);
    }
}
