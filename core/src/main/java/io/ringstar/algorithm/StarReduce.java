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
 * <p><b>Copies.</b> As for {@link RingAllReduce}: source and result are the input and result
 * arrays themselves for one 'c'-order tensor per type. Rank 0 writes its input plus the first
 * worker's chunk into its result and adds the others' there (dividing with the last worker's),
 * straight out of the transport's memory; a worker sends from its input and copies the averaged
 * chunk straight out of the transport's memory into its result.
 */
public final class StarReduce {
    /** Chunks a worker may send ahead of the results it has received. */
    static final int WINDOW = 4;

    private StarReduce() {
    }

    /**
     * Writes into {@code result} the reduction (the call's op; the average for the aggregators) over
     * all ranks of each rank's {@code source} (the two may be one buffer; {@code source} is only read).
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
            for (int chunk = 0; chunk < chunks; chunk++) {
                long first = ChunkLayout.partStart(total, chunks, chunk);
                int count = (int) (ChunkLayout.partStart(total, chunks, chunk + 1) - first);
                int start = Math.toIntExact(first * type.bytes());
                int length = count * type.bytes();
                // In rank order: rank 0's input plus the first worker's chunk into the result, then
                // the others added there, the last with the division in the same pass.
                for (int worker = 1; worker < worldSize; worker++) {
                    call.receiveReduce(worker, MessageKind.STAR_REDUCE, chunk, result, start,
                            worker == 1 ? source : result, count,
                            worker == worldSize - 1 ? RingAllReduce.divisor(call) : 1);
                }
                for (int worker = 1; worker < worldSize; worker++) {
                    call.send(worker, MessageKind.STAR_REDUCE_RESULT, chunk, result, start, length);
                }
            }
            return;
        }
        int sent = 0;
        for (int chunk = 0; chunk < chunks; chunk++) {
            while (sent < chunks && sent < chunk + WINDOW) {
                int start = ChunkLayout.partStartByte(total, chunks, sent, type.bytes());
                int end = ChunkLayout.partStartByte(total, chunks, sent + 1, type.bytes());
                call.send(0, MessageKind.STAR_REDUCE, sent, source, start, end - start);
                sent++;
            }
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int length = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start;
            call.receiveCopy(0, MessageKind.STAR_REDUCE_RESULT, chunk, result, start, length);
        }
    }
}
