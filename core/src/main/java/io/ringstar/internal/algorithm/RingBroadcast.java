package io.ringstar.internal.algorithm;

import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Broadcast from the call's root ({@link CollectiveCall#root()}, rank 0 for the aggregators) along
 * the ring, as a pipelined chain. Ranks are counted from the root: rank {@code root + i} (mod
 * {@code n}) is the chain's {@code i}-th. The root sends the bucket chunk by chunk to the next
 * rank, every rank forwards each chunk to the next as soon as it has it, and the last rank of the
 * chain ({@code root - 1}) tells every rank, the root first, that the chain is complete. Each
 * link carries the bucket once; the closing notice means a rank returns only once every rank has
 * the data, and that every rank learns of a rank that disagreed (the last rank's notice depends on
 * every message of the chain having been checked).
 *
 * <p>Before anything else every rank sends the next a header-only hello, and every rank but the
 * root takes the hello from the previous rank before the data (the root takes it at the end). A
 * rank's first wait is therefore always answered: ranks that disagree on the root, even such that
 * none takes itself for the root, or on anything else the header says, fail at once instead of
 * waiting on one another for their timeout.
 *
 * <p><b>Bytes</b>, for {@code S} bytes: every rank but the last sends {@code S}, every rank but
 * the root receives {@code S}; plus {@code 2n - 1} header-only messages in all. Latency:
 * {@code n - 1 + K - 1} chunk hops for {@code K} chunks, plus one for the notice.
 *
 * <p><b>Copies.</b> Each received chunk is copied once, straight out of the transport's memory into
 * the result (the result array itself for one 'c'-order tensor per type), and sent on from there;
 * the root sends from its input and copies it into its result. Every rank ends with the root's
 * bytes.
 */
public final class RingBroadcast {
    private RingBroadcast() {
    }

    /**
     * Writes the root's {@code source} into {@code result} on every rank (the two may be one buffer;
     * only the root reads its source).
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        int rank = call.rank();
        int worldSize = call.worldSize();
        int root = call.root();
        if (worldSize == 1) {
            call.copyWhole(source, result);
            return;
        }
        ElementType type = call.type();
        long total = call.elementCount();
        int chunks = ChunkLayout.chunkCount(total, maxChunkElements);
        int position = Math.floorMod(rank - root, worldSize);
        int next = (rank + 1) % worldSize;
        int prev = (rank - 1 + worldSize) % worldSize;
        int last = Math.floorMod(root - 1, worldSize);
        MessageKind kind = MessageKind.RING_BROADCAST;
        // The chunks are messages 0..K-1 (as before the hello came), the closing notice K, the hello K+1.
        int hello = chunks + 1;
        call.sendNotice(next, kind, hello);
        if (position != 0) {
            call.receiveNotice(prev, kind, hello);
        }
        for (int chunk = 0; chunk < chunks; chunk++) {
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int length = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start;
            if (position != 0) {
                call.receiveCopy(prev, kind, chunk, result, start, length);
            }
            if (rank != last) {
                call.send(next, kind, chunk, position == 0 ? source : result, start, length);
            }
        }
        if (position == 0) {
            call.copyWhole(source, result);
            call.receiveNotice(prev, kind, hello);
        }
        if (rank == last) {
            for (int offset = 0; offset < worldSize - 1; offset++) {
                call.sendNotice((root + offset) % worldSize, MessageKind.RING_BROADCAST_DONE, chunks);
            }
        } else {
            call.receiveNotice(last, MessageKind.RING_BROADCAST_DONE, chunks);
        }
    }
}
