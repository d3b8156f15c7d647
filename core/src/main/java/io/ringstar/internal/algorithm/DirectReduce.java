package io.ringstar.internal.algorithm;

import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Reduce to one rank, the call's root ({@link CollectiveCall#root()}): every other rank streams its
 * input to the root chunk by chunk, and the root combines them, chunk by chunk, into its result.
 *
 * <p><b>Steps.</b>
 * <ol>
 * <li>Every rank sends the next rank on the ring a header-only hello and takes the previous rank's:
 *     a rank's first wait is always answered, so ranks that disagree on the root (even such that
 *     none takes itself for the root, or several do) or on anything else fail at once instead of
 *     waiting on one another for their timeout.</li>
 * <li>Every rank but the root sends its input in {@code K} chunks of at most the chunk size.</li>
 * <li>The root combines chunk {@code c} of every rank as it arrives, in a fixed order: its own
 *     input first, then the other ranks in increasing rank order, {@code ((x_root op x_a) op x_b)
 *     op ...} for {@code a < b < ...}; the first combine writes into the result, the others combine
 *     in place, and the last divides an average by {@code n} in the same pass.</li>
 * <li>The root sends every rank a header-only notice that the reduce is complete; the other ranks
 *     wait for it, so that a rank returns only once the root has its data and every header was
 *     checked, and a rank that disagreed fails every rank.</li>
 * </ol>
 *
 * <p><b>Bytes</b>, for {@code S} bytes: each rank but the root sends {@code S}; the root receives
 * {@code (n-1) S} and sends {@code n-1} notices. Latency: {@code K} chunks in sequence at the root,
 * plus the hello and the notice. There is no window of acknowledgements: what a link holds is
 * bounded by the transport's back-pressure, and the root keeps one chunk of each rank in hand.
 *
 * <p><b>Copies.</b> Every received byte is combined once, straight out of the transport's memory
 * into the root's result; the input is never copied. The other ranks' results are not written.
 */
public final class DirectReduce {
    private DirectReduce() {
    }

    /**
     * Writes into the root's {@code result} the reduction (the call's op) over all ranks of each
     * rank's {@code source}; both hold {@link CollectiveCall#elementCount()} elements from byte 0,
     * and may be one buffer. {@code source} is only read; the other ranks' {@code result} is not
     * written.
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
        MessageKind kind = MessageKind.DIRECT_REDUCE;
        // The chunks are messages 0..K-1, the root's notice K, the hello K+1.
        call.sendNotice((rank + 1) % worldSize, kind, chunks + 1);
        call.receiveNotice((rank - 1 + worldSize) % worldSize, kind, chunks + 1);
        if (rank != root) {
            for (int chunk = 0; chunk < chunks; chunk++) {
                int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
                int end = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes());
                call.send(root, kind, chunk, source, start, end - start);
            }
            call.receiveNotice(root, MessageKind.DIRECT_REDUCE_DONE, chunks);
            return;
        }
        int firstPeer = root == 0 ? 1 : 0;
        int lastPeer = root == worldSize - 1 ? worldSize - 2 : worldSize - 1;
        for (int chunk = 0; chunk < chunks; chunk++) {
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int count = (ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start) / type.bytes();
            for (int peer = firstPeer; peer <= lastPeer; peer++) {
                if (peer != root) {
                    call.from(peer, kind, chunk).reduceInto(result, start, peer == firstPeer ? source : result, count,
                            peer == lastPeer ? RingAllReduce.divisor(call) : 1);
                }
            }
        }
        for (int peer = 0; peer < worldSize; peer++) {
            if (peer != root) {
                call.sendNotice(peer, MessageKind.DIRECT_REDUCE_DONE, chunks);
            }
        }
    }
}
