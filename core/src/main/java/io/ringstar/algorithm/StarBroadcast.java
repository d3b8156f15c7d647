package io.ringstar.algorithm;

import io.ringstar.protocol.MessageKind;
import io.ringstar.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Broadcast from rank 0 to every worker directly (the parameter server's star). Each worker first
 * sends rank 0 a header-only notice that it has entered the broadcast; rank 0 checks every
 * notice, so a worker with another layout, or one in another operation, makes rank 0 fail too,
 * and then streams its input chunk by chunk to every worker and copies it into its own result.
 * A worker copies each chunk once, straight out of the transport's memory into its result (the
 * result array itself for one 'c'-order tensor per type).
 */
public final class StarBroadcast {
    private StarBroadcast() {
    }

    /**
     * Writes rank 0's {@code source} into {@code result} on every rank (the two may be one buffer;
     * only rank 0 reads its source).
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            call.copyWhole(source, result);
            return;
        }
        ElementType type = call.type();
        long total = call.elementCount();
        int chunks = ChunkLayout.chunkCount(total, maxChunkElements);
        if (call.rank() == 0) {
            for (int worker = 1; worker < worldSize; worker++) {
                call.receiveNotice(worker, MessageKind.STAR_BROADCAST_READY, 0);
            }
        } else {
            call.send(0, MessageKind.STAR_BROADCAST_READY, 0, result, 0, 0);
        }
        for (int chunk = 0; chunk < chunks; chunk++) {
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int length = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start;
            if (call.rank() == 0) {
                for (int worker = 1; worker < worldSize; worker++) {
                    call.send(worker, MessageKind.STAR_BROADCAST, chunk, source, start, length);
                }
            } else {
                call.receiveCopy(0, MessageKind.STAR_BROADCAST, chunk, result, start, length);
            }
        }
        if (call.rank() == 0) {
            call.copyWhole(source, result);
        }
    }
}
