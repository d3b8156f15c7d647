package io.ringstar.checkpoint;

import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorMemory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Writes one {@link CheckpointFile} sequentially through a staging buffer, every byte counted into
 * the CRC32C that {@link #finish} appends. Owned by {@link CheckpointFile#write}, for one file.
 */
final class CheckpointWriter {
    private final FileChannel channel;
    private final ByteBuffer staging = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN);
    private final CRC32C crc = new CRC32C();

    CheckpointWriter(FileChannel channel) {
        this.channel = channel;
    }

    CheckpointWriter putInt(int value) throws IOException {
        room(4);
        staging.putInt(value);
        return this;
    }

    CheckpointWriter putLong(long value) throws IOException {
        room(8);
        staging.putLong(value);
        return this;
    }

    CheckpointWriter putText(byte[] text) throws IOException {
        putInt(text.length);
        flush();
        raw(ByteBuffer.wrap(text));
        return this;
    }

    void putElements(INDArray tensor) throws IOException {
        long bytes = tensor.length() * ElementType.of(tensor.dataType()).bytes();
        if (bytes == 0) {
            return;
        }
        flush();
        INDArray source = TensorMemory.linearInCOrder(tensor);
        try {
            for (long at = 0; at < bytes; at += CheckpointFile.IO_BYTES) {
                raw(TensorMemory.bytes(source, at, (int) Math.min(CheckpointFile.IO_BYTES, bytes - at)));
            }
        } finally {
            TensorMemory.closeIfCopy(tensor, source);
        }
    }

    /** Writes the CRC of everything so far, which itself is not counted. */
    void finish() throws IOException {
        flush();
        ByteBuffer trailer = ByteBuffer.allocate(CheckpointFile.TRAILER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        trailer.putInt((int) crc.getValue()).flip();
        while (trailer.hasRemaining()) {
            channel.write(trailer);
        }
    }

    private void room(int bytes) throws IOException {
        if (staging.remaining() < bytes) {
            flush();
        }
    }

    private void flush() throws IOException {
        staging.flip();
        raw(staging);
        staging.clear();
    }

    private void raw(ByteBuffer bytes) throws IOException {
        crc.update(bytes.duplicate());
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }
}
