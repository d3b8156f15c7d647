package io.ringstar.internal.algorithm;

import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Ring all-gather, chunked and pipelined: every rank contributes one block of
 * {@link CollectiveCall#elementCount()} elements and ends with all {@code n} blocks, block
 * {@code b} (rank {@code b}'s) at byte {@code b * blockBytes} of its result.
 *
 * <p><b>Steps.</b> {@code n-1} steps; rank {@code r} sends only to {@code r+1} and receives only
 * from {@code r-1}. At step {@code t} it sends block {@code r-t} (its own at step 0, after that the
 * one received at step {@code t-1}) and receives block {@code r-t-1} (mod {@code n}). Each block is
 * cut into {@code K} chunks of at most the chunk size; the {@code (n-1)K} messages form one stream
 * in which message {@code m} carries what arrived as message {@code m-K}; sends run at most
 * {@value SendWindow#MESSAGES} messages ahead of receives, the last one before each receive going
 * with the receive posted first.
 *
 * <p><b>Bytes</b>, for a result of {@code S} bytes: every rank sends and receives
 * {@code (n-1)/n * S}. Latency: {@code n-1} steps.
 *
 * <p><b>Bit-identical results.</b> Nothing is computed: every block is its owner's bytes, copied.
 *
 * <p><b>Copies.</b> Each received chunk is copied once, straight out of the transport's memory
 * into its place in the result, and sent on from there; the own block is sent from the result.
 * The last message a rank receives was sent after its sender had received the one before it, and
 * so on around the ring, so every rank has heard, through the headers, from every other: a rank
 * that disagrees fails every rank.
 */
public final class RingAllGather {
    private RingAllGather() {
    }

    /**
     * Gathers every rank's block into {@code result}, which holds {@code n} blocks of
     * {@link CollectiveCall#elementCount()} elements back to back; on entry this rank's own block
     * must be in place at its rank's offset.
     */
    public static void run(CollectiveCall call, ByteBuffer result, int maxChunkElements) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            return;
        }
        int rank = call.rank();
        ElementType type = call.type();
        long blockElements = call.elementCount();
        int blockBytes = Math.toIntExact(blockElements * type.bytes());
        if ((long) blockBytes * worldSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(worldSize + " blocks of " + blockBytes + " bytes do not fit one buffer");
        }
        gather(call, MessageKind.RING_ALL_GATHER, result, blockElements, type.bytes(), maxChunkElements);
    }

    /**
     * The ring itself, for blocks of {@code blockUnits} units of {@code unitBytes} bytes each (the
     * call's elements, or the bytes of top-k's pair blocks, {@link TopKAllReduce}), in messages of
     * {@code kind} of at most {@code maxChunkUnits} units; {@code result} holds {@code n} blocks.
     */
    static void gather(CollectiveCall call, MessageKind kind, ByteBuffer result, long blockUnits, int unitBytes,
            int maxChunkUnits) {
        int worldSize = call.worldSize();
        int rank = call.rank();
        int blockBytes = Math.toIntExact(blockUnits * unitBytes);
        int chunks = ChunkLayout.chunkCount(blockUnits, maxChunkUnits);
        int next = (rank + 1) % worldSize;
        int prev = (rank - 1 + worldSize) % worldSize;
        int messages = (worldSize - 1) * chunks;
        int window = SendWindow.MESSAGES;
        int sent = 0;
        for (int m = 0; m < messages; m++) {
            while (sent < messages && sent < m + window && sent - chunks < m) {
                int block = Math.floorMod(rank - sent / chunks, worldSize);
                int chunk = sent % chunks;
                int start = ChunkLayout.partStartByte(blockUnits, chunks, chunk, unitBytes);
                int end = ChunkLayout.partStartByte(blockUnits, chunks, chunk + 1, unitBytes);
                call.sendBeforeReceive(next, kind, sent, result, block * blockBytes + start, end - start);
                sent++;
            }
            int block = Math.floorMod(rank - m / chunks - 1, worldSize);
            int chunk = m % chunks;
            int start = ChunkLayout.partStartByte(blockUnits, chunks, chunk, unitBytes);
            int end = ChunkLayout.partStartByte(blockUnits, chunks, chunk + 1, unitBytes);
            call.receiveCopy(prev, kind, m, result, block * blockBytes + start, end - start);
        }
    }
}
