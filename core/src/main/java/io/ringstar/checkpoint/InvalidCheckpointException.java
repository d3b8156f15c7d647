package io.ringstar.checkpoint;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A checkpoint file that cannot be used: cut short by a crash during the write (torn), changed
 * on disk (checksum), not a checkpoint at all (magic) or of a format version this code does not
 * read. The message names the file and what is wrong with it.
 */
public final class InvalidCheckpointException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;

    InvalidCheckpointException(Path file, String problem) {
        super("checkpoint " + file + ": " + problem);
        this.file = file;
    }

    /** The file that was rejected. */
    public Path file() {
        return file;
    }
}
