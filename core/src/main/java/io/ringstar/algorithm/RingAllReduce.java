package io.ringstar.algorithm;

import io.ringstar.protocol.MessageHeader;
import io.ringstar.protocol.MessageKind;
import io.ringstar.tensor.ElementType;
import io.ringstar.tensor.Reduction;
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
 * ranks copy that result, so results are bit-identical on every rank.
 */
public final class RingAllReduce {
    /** Messages a rank may send ahead of the ones it has received. */
    static final int WINDOW = 2;

    private final CollectiveCall call;
    private final ByteBuffer bucket;
    private final ElementType type;
    private final int rank;
    private final int worldSize;
    private final int chunksPerSegment;

    private RingAllReduce(CollectiveCall call, ByteBuffer bucket, int maxChunkElements) {
        this.call = call;
        this.bucket = bucket;
        this.type = call.type();
        this.rank = call.rank();
        this.worldSize = call.worldSize();
        this.chunksPerSegment = ChunkLayout.chunkCount(
                ChunkLayout.longestPart(call.elementCount(), worldSize), maxChunkElements);
    }

    /** Replaces the bucket's contents with the average over all ranks. */
    public static void run(CollectiveCall call, ByteBuffer bucket, int maxChunkElements) {
        new RingAllReduce(call, bucket, maxChunkElements).run();
    }

    private void run() {
        if (worldSize == 1) {
            return;
        }
        int next = (rank + 1) % worldSize;
        int prev = (rank - 1 + worldSize) % worldSize;
        int messages = 2 * (worldSize - 1) * chunksPerSegment;
        int sent = 0;
        for (int m = 0; m < messages; m++) {
            // Message s may go once message s-K has been received and processed (or s < K: own data).
            while (sent < messages && sent < m + WINDOW && sent - chunksPerSegment < m) {
                long start = chunkStart(sendSegment(sent), sent % chunksPerSegment);
                long end = chunkStart(sendSegment(sent), sent % chunksPerSegment + 1);
                call.send(next, MessageKind.RING_ALL_REDUCE, sent, bucket, byteOffset(start), byteOffset(end - start));
                sent++;
            }
            int step = m / chunksPerSegment;
            int segment = Math.floorMod(rank - step - 1, worldSize);
            long start = chunkStart(segment, m % chunksPerSegment);
            int count = (int) (chunkStart(segment, m % chunksPerSegment + 1) - start);
            ByteBuffer received = call.receive(prev, MessageKind.RING_ALL_REDUCE, m, byteOffset(count));
            if (step < worldSize - 1) {
                Reduction.add(type, bucket, byteOffset(start), received, MessageHeader.LENGTH, count);
                if (step == worldSize - 2) {
                    Reduction.divide(type, bucket, byteOffset(start), count, worldSize);
                }
            } else {
                Reduction.copy(bucket, byteOffset(start), received, MessageHeader.LENGTH, byteOffset(count));
            }
        }
    }

    /** The segment that message {@code m} carries: {@code r - step}; the same formula holds in both phases. */
    private int sendSegment(int m) {
        return Math.floorMod(rank - m / chunksPerSegment, worldSize);
    }

    /** First element of chunk {@code chunk} of {@code segment}; chunk {@code K} gives the segment's end. */
    private long chunkStart(int segment, int chunk) {
        long total = call.elementCount();
        long segmentStart = ChunkLayout.partStart(total, worldSize, segment);
        long segmentLength = ChunkLayout.partStart(total, worldSize, segment + 1) - segmentStart;
        return segmentStart + ChunkLayout.partStart(segmentLength, chunksPerSegment, chunk);
    }

    private int byteOffset(long elements) {
        return Math.toIntExact(elements * type.bytes());
    }
}
