package io.ringstar.checkpoint;

import io.ringstar.internal.tensor.TensorMemory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Reads the checksummed body of one {@link CheckpointFile} sequentially, each read bounded by what
 * is left of it, and words what is malformed. Owned by {@link CheckpointFile#read}, for one file.
 */
final class CheckpointReader {
    private final Path file;
    private final FileChannel channel;
    private final long end;
    private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    private long position;

    CheckpointReader(Path file, FileChannel channel, long end) {
        this.file = file;
        this.channel = channel;
        this.end = end;
    }

    void skip(long bytes) throws IOException {
        require(bytes, "header");
        position += bytes;
    }

    int getInt() throws IOException {
        return fill(4).getInt();
    }

    long getLong() throws IOException {
        return fill(8).getLong();
    }

    int count(String what) throws IOException {
        int count = getInt();
        if (count < 0) {
            throw malformed("negative number of " + what + ": " + count);
        }
        return count;
    }

    /** A text that must be neither empty nor one of {@code taken}. */
    String getName(String what, Set<String> taken) throws IOException {
        String name = getText(what);
        if (name.isEmpty()) {
            throw malformed("empty " + what);
        }
        if (taken.contains(name)) {
            throw malformed(what + " '" + name + "' appears twice");
        }
        return name;
    }

    String getText(String what) throws IOException {
        int length = getInt();
        if (length < 0 || length > Checkpoint.MAX_TEXT_BYTES) {
            throw malformed(what + " of " + length + " bytes");
        }
        require(length, what);
        ByteBuffer text = ByteBuffer.allocate(length);
        CheckpointFile.readFully(channel, text, position);
        position += length;
        return new String(text.array(), StandardCharsets.UTF_8);
    }

    void getElements(INDArray tensor, long bytes) throws IOException {
        for (long at = 0; at < bytes; at += CheckpointFile.IO_BYTES) {
            ByteBuffer window = TensorMemory.bytes(tensor, at, (int) Math.min(CheckpointFile.IO_BYTES, bytes - at));
            CheckpointFile.readFully(channel, window, position);
            position += window.capacity();
        }
    }

    void require(long bytes, String what) throws InvalidCheckpointException {
        if (bytes > end - position) {
            throw malformed(what + " needs " + bytes + " bytes at byte " + position + ", but only "
                    + (end - position) + " are left before the checksum");
        }
    }

    void requireEnd() throws InvalidCheckpointException {
        if (position != end) {
            throw malformed((end - position) + " bytes follow the last entry");
        }
    }

    InvalidCheckpointException malformed(String problem) {
        return new InvalidCheckpointException(file, "malformed although its checksum holds: " + problem);
    }

    private ByteBuffer fill(int bytes) throws IOException {
        require(bytes, "a number");
        scratch.clear().limit(bytes);
        CheckpointFile.readFully(channel, scratch, position);
        position += bytes;
        return scratch.flip();
    }
}
