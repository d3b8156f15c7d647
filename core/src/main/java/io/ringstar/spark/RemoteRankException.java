package io.ringstar.spark;

/**
 * A rank's exception that Spark could not send back as itself (it was not serializable, or its
 * class is not on the driver's class path): its class name, message and stack trace, as the
 * executor reported them.
 */
public class RemoteRankException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String className;

    /** The exception of class {@code className}, with the executor's {@code description} and stack trace. */
    public RemoteRankException(String className, String description, StackTraceElement[] stackTrace) {
        super(className + (description == null || description.isEmpty() ? "" : ": " + description));
        this.className = className;
        setStackTrace(stackTrace == null ? new StackTraceElement[0] : stackTrace);
    }

    /** The class name of the rank's exception. */
    public String className() {
        return className;
    }
}
