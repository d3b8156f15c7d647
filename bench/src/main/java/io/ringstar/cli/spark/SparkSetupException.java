package io.ringstar.cli.spark;

/**
 * {@code train --spark} cannot run as asked, for a reason the user fixes (Spark not found, images that
 * do not fit the flags, an option the ranks refuse): the message says what to do. The command line
 * reports it as a usage error.
 */
public final class SparkSetupException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong and what to do */
    public SparkSetupException(String message) {
        super(message);
    }
}
