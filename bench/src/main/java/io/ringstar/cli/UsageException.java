package io.ringstar.cli;

/** A command line that the program does not understand; it exits with status {@value #EXIT_STATUS}. */
public final class UsageException extends Exception {
    /** The exit status of a usage error, as for most Unix tools. */
    public static final int EXIT_STATUS = 2;

    /** @param message what is wrong and, where it helps, what to give instead */
    public UsageException(String message) {
        super(message);
    }
}
