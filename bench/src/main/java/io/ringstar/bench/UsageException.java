package io.ringstar.bench;

/** A command line that the program does not understand; it exits with status {@value #EXIT_STATUS}. */
final class UsageException extends Exception {
    /** The exit status of a usage error, as for most Unix tools. */
    static final int EXIT_STATUS = 2;

    UsageException(String message) {
        super(message);
    }
}
