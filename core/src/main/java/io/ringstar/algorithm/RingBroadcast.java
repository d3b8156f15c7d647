package io.ringstar.algorithm;

import io.ringstar.protocol.MessageKind;
import io.ringstar.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Broadcast from rank 0 along the ring, as a pipelined chain: rank 0 sends the bucket chunk by
 * chunk to rank 1, every rank forwards each chunk to the next as soon as it has it, and the last
 * rank tells rank 0 that the chain is complete. Each link carries the bucket once; the closing
 * notice means rank 0 returns only once every rank has the data, and that rank 0 too learns of
 * a rank that disagreed. Each received chunk is copied once, straight out of the transport's
 * memory into the result (the result array itself for one 'c'-order tensor per type), and sent on
 * from there; rank 0 sends from its input and copies it into its result.
 */
public final class RingBroadcast {
    private RingBroadcast() {
    }

    /**
     * Writes rank 0's {@code source} into {@code result} on every rank (the two may be one buffer;
     * only rank 0 reads its source).
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        int rank = call.rank();
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            call.copyWhole(source, result);
            return;
        }
        ElementType type = call.type();
        long total = call.elementCount();
        int chunks = ChunkLayout.chunkCount(total, maxChunkElements);
        int last = worldSize - 1;
        for (int chunk = 0; chunk < chunks; chunk++) {
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int length = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start;
            if (rank != 0) {
                call.receiveCopy(rank - 1, MessageKind.RING_BROADCAST, chunk, result, start, length);
            }
            if (rank != last) {
                call.send(rank + 1, MessageKind.RING_BROADCAST, chunk, rank == 0 ? source : result, start, length);
            }
        }
        if (rank == 0) {
            call.copyWhole(source, result);
        }
        if (rank == last) {
            call.send(0, MessageKind.RING_BROADCAST_DONE, chunks, result, 0, 0);
        } else if (rank == 0) {
            call.receiveNotice(last, MessageKind.RING_BROADCAST_DONE, chunks);
        }
    }
}
