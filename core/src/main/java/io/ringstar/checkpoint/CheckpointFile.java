package io.ringstar.checkpoint;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The on-disk format of one {@link Checkpoint}, little-endian:
 *
 * <pre>
 *  byte 0       4         8                    16             24              28             32
 *       +-------+---------+--------------------+--------------+---------------+--------------+
 *       | magic | version | file length (long) | step (long)  | metadata (int)| tensors (int)|
 *       +-------+---------+--------------------+--------------+---------------+--------------+
 *  32   metadata entries: key length (int), key (UTF-8), value length (int), value (UTF-8)
 *       tensor entries:   name length (int), name (UTF-8), type (int, {@link ElementType#code()}),
 *                         rank (int), rank dimensions (long each), the elements in 'c' order
 *  end-4  CRC32C (int) of every byte before it
 * </pre>
 *
 * The file length lets a reader tell a torn file (shorter than it says) from a changed one
 * (checksum); the checksum is verified over the whole file before anything in it is believed, so
 * a corrupt count or shape can never make the reader allocate what the file cannot hold.
 */
final class CheckpointFile {
    /** "RSCK" read as a little-endian int. */
    static final int MAGIC = 0x4B435352;
    static final int VERSION = 1;
    static final int HEADER_BYTES = 32;
    static final int TRAILER_BYTES = 4;
    /** Bytes moved per read or write of tensor elements and of the checksum pass. */
    static final int IO_BYTES = 1 << 20;

    private CheckpointFile() {
    }

    /** Writes {@code checkpoint} to {@code file} (created or truncated) and forces it to disk. */
    static void write(Path file, Checkpoint checkpoint) throws IOException {
        requireLittleEndian("written");
        List<byte[]> texts = new ArrayList<>();
        long length = HEADER_BYTES + TRAILER_BYTES;
        for (Map.Entry<String, String> entry : checkpoint.metadata().entrySet()) {
            length += text(texts, entry.getKey()) + text(texts, entry.getValue());
        }
        for (Map.Entry<String, INDArray> entry : checkpoint.tensors().entrySet()) {
            INDArray tensor = entry.getValue();
            length += text(texts, entry.getKey()) + 8 + 8L * tensor.rank()
                    + tensor.length() * ElementType.of(tensor.dataType()).bytes();
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            CheckpointWriter out = new CheckpointWriter(channel);
            out.putInt(MAGIC).putInt(VERSION).putLong(length).putLong(checkpoint.step())
                    .putInt(checkpoint.metadata().size()).putInt(checkpoint.tensors().size());
            int next = 0;
            for (int i = 0; i < checkpoint.metadata().size(); i++) {
                out.putText(texts.get(next++)).putText(texts.get(next++));
            }
            for (INDArray tensor : checkpoint.tensors().values()) {
                out.putText(texts.get(next++)).putInt(ElementType.of(tensor.dataType()).code()).putInt(tensor.rank());
                for (long dimension : tensor.shape()) {
                    out.putLong(dimension);
                }
                out.putElements(tensor);
            }
            out.finish();
            if (channel.size() != length) {
                throw new IOException("wrote " + channel.size() + " bytes to " + file + " but planned " + length);
            }
            channel.force(true);
        }
    }

    private static void requireLittleEndian(String verb) throws IOException {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            // Tensor memory is copied as it lies; the format is little-endian.
            throw new IOException("checkpoints are " + verb + " on little-endian machines only");
        }
    }

    private static int text(List<byte[]> texts, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        texts.add(bytes);
        return 4 + bytes.length;
    }

    /**
     * Reads and checks a whole file.
     *
     * @throws InvalidCheckpointException if the file is torn, changed, not a checkpoint or of another version
     * @throws IOException if it cannot be read
     */
    static Checkpoint read(Path file) throws IOException {
        requireLittleEndian("read");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size < HEADER_BYTES + TRAILER_BYTES) {
                throw new InvalidCheckpointException(file, "only " + size + " bytes, shorter than any checkpoint ("
                        + (HEADER_BYTES + TRAILER_BYTES) + "); the write was cut short (torn)");
            }
            ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            readFully(channel, header, 0);
            header.flip();
            int magic = header.getInt();
            if (magic != MAGIC) {
                throw new InvalidCheckpointException(file, String.format("magic 0x%08X is not a ringstar checkpoint's "
                        + "(0x%08X)", magic, MAGIC));
            }
            int version = header.getInt();
            if (version != VERSION) {
                throw new InvalidCheckpointException(file, "format version " + version + "; this code reads version "
                        + VERSION);
            }
            long length = header.getLong();
            if (length != size) {
                throw new InvalidCheckpointException(file, size < length
                        ? "only " + size + " of its " + length + " bytes are there; the write was cut short (torn)"
                        : size + " bytes, but its header says " + length + " (corrupt)");
            }
            verifyChecksum(file, channel, size);
            return parse(file, channel, size);
        }
    }

    private static void verifyChecksum(Path file, FileChannel channel, long size) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(IO_BYTES, size));
        long body = size - TRAILER_BYTES;
        for (long at = 0; at < body; ) {
            buffer.clear().limit((int) Math.min(buffer.capacity(), body - at));
            readFully(channel, buffer, at);
            buffer.flip();
            at += buffer.remaining();
            crc.update(buffer);
        }
        ByteBuffer trailer = ByteBuffer.allocate(TRAILER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        readFully(channel, trailer, body);
        int stored = trailer.flip().getInt();
        int computed = (int) crc.getValue();
        if (stored != computed) {
            throw new InvalidCheckpointException(file, String.format("checksum mismatch: the file says CRC32C "
                    + "0x%08X, its bytes give 0x%08X (corrupt)", stored, computed));
        }
    }

    /** The checksum holds, so anything wrong here was written so; still nothing is allocated beyond the file. */
    private static Checkpoint parse(Path file, FileChannel channel, long size) throws IOException {
        CheckpointReader in = new CheckpointReader(file, channel, size - TRAILER_BYTES);
        in.skip(16);
        long step = in.getLong();
        int metadataCount = in.count("metadata entries");
        int tensorCount = in.count("tensors");
        Map<String, String> metadata = new LinkedHashMap<>();
        for (int i = 0; i < metadataCount; i++) {
            String key = in.getName("metadata key", metadata.keySet());
            metadata.put(key, in.getText("metadata value of '" + key + "'"));
        }
        Map<String, INDArray> tensors = new LinkedHashMap<>();
        try {
            for (int i = 0; i < tensorCount; i++) {
                String name = in.getName("tensor name", tensors.keySet());
                int code = in.getInt();
                ElementType type = ElementType.fromCode(code);
                if (type == null) {
                    throw in.malformed("tensor '" + name + "' has unknown type code " + code);
                }
                int rank = in.getInt();
                if (rank < 0 || rank > Checkpoint.MAX_RANK) {
                    throw in.malformed("tensor '" + name + "' has rank " + rank);
                }
                long[] shape = new long[rank];
                long elements = 1;
                for (int d = 0; d < rank; d++) {
                    shape[d] = in.getLong();
                    if (shape[d] < 0) {
                        throw in.malformed("tensor '" + name + "' has dimension " + shape[d]);
                    }
                    // Capped rather than overflowing: any count this large is refused by require() below.
                    long cap = Long.MAX_VALUE / Double.BYTES;
                    elements = shape[d] == 0 ? 0 : elements > cap / shape[d] ? cap : elements * shape[d];
                }
                long bytes = elements * type.bytes();
                in.require(bytes, "tensor '" + name + "' of shape " + Arrays.toString(shape));
                INDArray tensor = TensorMemory.newDetached(type, shape);
                tensors.put(name, tensor);
                in.getElements(tensor, bytes);
            }
            in.requireEnd();
            try {
                return new Checkpoint(step, tensors, metadata);
            } catch (IllegalArgumentException e) {
                // What the reader does not check itself (a negative step, say) must not escape as
                // anything but an invalid checkpoint, which loadLatest skips.
                throw in.malformed(e.getMessage());
            }
        } catch (IOException | RuntimeException e) {
            tensors.values().forEach(TensorMemory::close);
            throw e;
        }
    }

    /** Reads {@code buffer}'s remaining bytes from {@code position} on, or throws at the file's end. */
    static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, at);
            if (read < 0) {
                throw new EOFException("file ended at byte " + at);
            }
            at += read;
        }
    }
}
