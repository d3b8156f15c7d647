package io.ringstar.algorithm;

import io.ringstar.protocol.MessageKind;
import io.ringstar.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Average through rank 0 (the parameter server's star). Workers stream their bucket to rank 0
 * chunk by chunk; rank 0 adds each worker's chunk into its own as it arrives, in rank order,
 * divides the finished chunk by {@code n} and streams it back to every worker at once. Rank 0
 * holds its own bucket and one chunk in flight, so its memory does not grow with the world size.
 * Workers run at most {@value #WINDOW} chunks ahead of the results they have received, which
 * bounds what any link holds.
 *
 * <p><b>Copies.</b> As for {@link RingAllReduce}: the bucket is the result array itself for one
 * 'c'-order tensor per type; rank 0 adds each worker's chunk (dividing with the last worker's)
 * straight out of the transport's memory, and a worker copies the averaged chunk straight out of
 * it; every send goes straight from the bucket.
 */
public final class StarReduce {
    /** Chunks a worker may send ahead of the results it has received. */
    static final int WINDOW = 4;

    private StarReduce() {
    }

    /** Replaces the bucket's contents with the average over all ranks. */
    public static void run(CollectiveCall call, ByteBuffer bucket, int maxChunkElements) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            return;
        }
        ElementType type = call.type();
        long total = call.elementCount();
        int chunks = ChunkLayout.chunkCount(total, maxChunkElements);
        if (call.rank() == 0) {
            for (int chunk = 0; chunk < chunks; chunk++) {
                long first = ChunkLayout.partStart(total, chunks, chunk);
                int count = (int) (ChunkLayout.partStart(total, chunks, chunk + 1) - first);
                int start = Math.toIntExact(first * type.bytes());
                int length = count * type.bytes();
                // In rank order, the last worker's chunk with the division in the same pass.
                for (int worker = 1; worker < worldSize; worker++) {
                    call.receiveAdd(worker, MessageKind.STAR_REDUCE, chunk, bucket, start, count,
                            worker == worldSize - 1 ? worldSize : 1);
                }
                for (int worker = 1; worker < worldSize; worker++) {
                    call.send(worker, MessageKind.STAR_REDUCE_RESULT, chunk, bucket, start, length);
                }
            }
            return;
        }
        int sent = 0;
        for (int chunk = 0; chunk < chunks; chunk++) {
            while (sent < chunks && sent < chunk + WINDOW) {
                int start = ChunkLayout.partStartByte(total, chunks, sent, type.bytes());
                int end = ChunkLayout.partStartByte(total, chunks, sent + 1, type.bytes());
                call.send(0, MessageKind.STAR_REDUCE, sent, bucket, start, end - start);
                sent++;
            }
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int length = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start;
            call.receiveCopy(0, MessageKind.STAR_REDUCE_RESULT, chunk, bucket, start, length);
        }
    }
}
