package io.ringstar.algorithm;

import io.ringstar.protocol.MessageKind;
import io.ringstar.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Bandwidth-optimal ring all-reduce (average), chunked and pipelined.
 *
 * <p>The bucket is cut into {@code n} segments and each segment into {@code K} chunks of at most
 * the configured chunk size. Rank {@code r} sends only to {@code r+1} and receives only from
 * {@code r-1}. There are {@code 2(n-1)} steps of {@code K} messages each: in reduce-scatter step
 * {@code t} rank {@code r} sends segment {@code r-t} and adds the received segment {@code r-t-1}
 * into its own; after {@code n-1} steps it holds the full sum of segment {@code r+1}, divides it
 * by {@code n} (the only scaling) and the all-gather steps pass the finished segments around the
 * ring. Per rank that is {@code 2(n-1)/n} of the bucket sent and received.
 *
 * <p>The {@code 2(n-1)K} messages form one stream in which message {@code m} carries what was
 * received as message {@code m-K}; sends run at most {@value #WINDOW} messages ahead of receives,
 * so the next chunk is on the wire while the current one is being reduced, and no link ever holds
 * more than {@value #WINDOW} chunks.
 *
 * <p>Every segment is summed in the same order on the one rank that finishes it, and the other
 * ranks copy that result, so results are bit-identical on every rank. The last reduce-scatter
 * step divides by {@code n} in the same pass as its addition.
 *
 * <p><b>Copies.</b> The bucket is the caller's result array itself when the call's tensors of this
 * type are one 'c'-order array (the aggregator copies the input into it, the only copy on this
 * rank outside the transport), else a packed bucket (one copy in, one out). Each message is sent
 * straight from the bucket into the transport's medium (the socket, Aeron's term, an in-process
 * peer's inbox), and each received chunk is added into the bucket (reduce-scatter) or copied into
 * it (all-gather) straight out of the transport's memory, so a received byte is read once and
 * written once. With the checksum on, a received message is first copied whole to be checked.
 */
public final class RingAllReduce {
    /** Messages a rank may send ahead of the ones it has received. */
    static final int WINDOW = 2;

    private RingAllReduce() {
    }

    /** Replaces the bucket's contents with the average over all ranks. */
    public static void run(CollectiveCall call, ByteBuffer bucket, int maxChunkElements) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            return;
        }
        int rank = call.rank();
        ElementType type = call.type();
        long total = call.elementCount();
        int chunksPerSegment = ChunkLayout.chunkCount(ChunkLayout.longestPart(total, worldSize), maxChunkElements);
        int next = (rank + 1) % worldSize;
        int prev = (rank - 1 + worldSize) % worldSize;
        int messages = 2 * (worldSize - 1) * chunksPerSegment;
        int sent = 0;
        for (int m = 0; m < messages; m++) {
            // Message s may go once message s-K has been received and processed (or s < K: own data).
            while (sent < messages && sent < m + WINDOW && sent - chunksPerSegment < m) {
                // The segment message s carries is r - step; the same formula holds in both phases.
                int segment = Math.floorMod(rank - sent / chunksPerSegment, worldSize);
                long start = chunkStart(total, worldSize, chunksPerSegment, segment, sent % chunksPerSegment);
                long end = chunkStart(total, worldSize, chunksPerSegment, segment, sent % chunksPerSegment + 1);
                call.send(next, MessageKind.RING_ALL_REDUCE, sent, bucket, bytes(start, type), bytes(end - start, type));
                sent++;
            }
            int step = m / chunksPerSegment;
            int segment = Math.floorMod(rank - step - 1, worldSize);
            long start = chunkStart(total, worldSize, chunksPerSegment, segment, m % chunksPerSegment);
            int count = (int) (chunkStart(total, worldSize, chunksPerSegment, segment, m % chunksPerSegment + 1)
                    - start);
            if (step < worldSize - 1) {
                // The last reduce-scatter step finishes the segment: its sums are divided in the same pass.
                call.receiveAdd(prev, MessageKind.RING_ALL_REDUCE, m, bucket, bytes(start, type), count,
                        step == worldSize - 2 ? worldSize : 1);
            } else {
                call.receiveCopy(prev, MessageKind.RING_ALL_REDUCE, m, bucket, bytes(start, type), bytes(count, type));
            }
        }
    }

    /** First element of chunk {@code chunk} of {@code segment}; chunk {@code K} gives the segment's end. */
    private static long chunkStart(long total, int worldSize, int chunksPerSegment, int segment, int chunk) {
        long segmentStart = ChunkLayout.partStart(total, worldSize, segment);
        long segmentLength = ChunkLayout.partStart(total, worldSize, segment + 1) - segmentStart;
        return segmentStart + ChunkLayout.partStart(segmentLength, chunksPerSegment, chunk);
    }

    private static int bytes(long elements, ElementType type) {
        return Math.toIntExact(elements * type.bytes());
    }
}
