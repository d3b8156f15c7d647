package io.ringstar.internal.algorithm;

import io.ringstar.ReduceOp;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Bandwidth-optimal ring all-reduce with the call's reduce op, chunked and pipelined.
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
 * received as message {@code m-K}; sends run at most {@value SendWindow#MESSAGES} messages ahead
 * of receives ({@link SendWindow}), so the next chunk is on the wire while the current one is
 * being reduced, and no link ever holds more than that. The last send before each receive goes with the receive
 * posted first ({@link CollectiveCall#sendBeforeReceive}), so what the previous rank sends while
 * this one waits to send is reduced as it arrives.
 *
 * <p>At two ranks, below {@link #HALVES_FROM_BYTES} the ring is folded into one pair exchange
 * ({@link #exchange}); from there on the ring itself runs, which at two ranks is a reduce-scatter
 * then an all-gather (Rabenseifner's algorithm): each rank reduces half of the bucket instead of
 * all of it, at the cost of a second step. Either gives the same bits: each element is
 * {@code a op b} on one rank and {@code b op a} on the other, and every op is commutative. The
 * choice is made by size, the same on every rank, since the two send different messages.
 *
 * <p>Every segment is summed in the same order on the one rank that finishes it, and the other
 * ranks copy that result, so results are bit-identical on every rank. The last reduce-scatter
 * step divides by {@code n} in the same pass as its addition.
 *
 * <p><b>Copies.</b> The source is the caller's input array and the result its result array when
 * the call's tensors of this type are one 'c'-order array; otherwise both are one packed bucket (one
 * copy in, one out). Messages of the first step go straight from the input, later ones from the
 * result, into the transport's medium (the socket, Aeron's term, an in-process peer's inbox). Each
 * received chunk is added to the input straight out of the transport's memory, the sum written
 * into the result (reduce-scatter), or copied into the result (all-gather): a received byte is
 * read once and the input is never copied (with three or more ranks, a partial sum written into
 * the result in the reduce-scatter is overwritten by the all-gather). With the checksum on,
 * a received message is first copied whole to be checked.
 */
public final class RingAllReduce {
    /**
     * At two ranks, the input size in bytes from which the ring (reduce-scatter, all-gather) runs
     * instead of the pair exchange: where it came out faster over Netty on loopback, 2 ranks on 2
     * cores (ALGORITHMS.md); below it the exchange's single step wins.
     */
    public static final long HALVES_FROM_BYTES = 64 << 10;

    private RingAllReduce() {
    }

    /**
     * Writes into {@code result} the reduction (the call's op) over all ranks of each rank's {@code source}; both
     * hold {@link CollectiveCall#elementCount()} elements from byte 0, and may be one buffer.
     * {@code source} is only read.
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        run(call, source, result, maxChunkElements, HALVES_FROM_BYTES);
    }

    /**
     * {@link #run(CollectiveCall, ByteBuffer, ByteBuffer, int)} with the two-rank threshold given
     * (see {@link #HALVES_FROM_BYTES}): 0 for the ring at every size, {@link Long#MAX_VALUE} for the
     * pair exchange at every size. Every rank must give the same.
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements,
            long halvesFromBytes) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            call.copyWhole(source, result);
            return;
        }
        if (worldSize == 2 && call.elementCount() * call.type().bytes() < halvesFromBytes) {
            exchange(call, source, result, maxChunkElements);
            return;
        }
        int rank = call.rank();
        ElementType type = call.type();
        long total = call.elementCount();
        int chunksPerSegment = ChunkLayout.chunkCount(ChunkLayout.longestPart(total, worldSize), maxChunkElements);
        int next = (rank + 1) % worldSize;
        int prev = (rank - 1 + worldSize) % worldSize;
        int messages = 2 * (worldSize - 1) * chunksPerSegment;
        int window = SendWindow.MESSAGES;
        int sent = 0;
        for (int m = 0; m < messages; m++) {
            // Message s may go once message s-K has been received and processed (or s < K: own data).
            while (sent < messages && sent < m + window && sent - chunksPerSegment < m) {
                // The segment message s carries is r - step; the same formula holds in both phases.
                int segment = Math.floorMod(rank - sent / chunksPerSegment, worldSize);
                long start = chunkStart(total, worldSize, chunksPerSegment, segment, sent % chunksPerSegment);
                long end = chunkStart(total, worldSize, chunksPerSegment, segment, sent % chunksPerSegment + 1);
                // The first step sends this rank's own input; every later one a segment reduced here.
                ByteBuffer from = sent < chunksPerSegment ? source : result;
                call.sendBeforeReceive(next, MessageKind.RING_ALL_REDUCE, sent, from, bytes(start, type),
                        bytes(end - start, type));
                sent++;
            }
            int step = m / chunksPerSegment;
            int segment = Math.floorMod(rank - step - 1, worldSize);
            long start = chunkStart(total, worldSize, chunksPerSegment, segment, m % chunksPerSegment);
            int count = (int) (chunkStart(total, worldSize, chunksPerSegment, segment, m % chunksPerSegment + 1)
                    - start);
            if (step < worldSize - 1) {
                // A segment reaches this rank once in the reduce-scatter: its partial sum plus this
                // rank's input goes straight into the result. The last step finishes the segment,
                // and its sums are divided in the same pass.
                call.from(prev, MessageKind.RING_ALL_REDUCE, m).reduceInto(result, bytes(start, type), source, count,
                        step == worldSize - 2 ? divisor(call) : 1);
            } else {
                call.receiveCopy(prev, MessageKind.RING_ALL_REDUCE, m, result, bytes(start, type), bytes(count, type));
            }
        }
    }

    /**
     * The ring of two ranks, folded into one exchange: each rank sends its whole bucket, chunk by
     * chunk, and adds the other's chunks into its own as they arrive, dividing in the same pass. The
     * two phases of the ring become one, so a small call takes one exchange instead of two that
     * wait on each other, and each rank still sends the bucket once ({@code 2(n-1)/n} of it). The
     * result is the ring's in every bit: each sum is {@code a + b} on one rank and {@code b + a} on
     * the other, and addition is commutative. Chunks go out of the input and sums into the result,
     * so this rank copies nothing beyond what it receives.
     */
    private static void exchange(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        int peer = 1 - call.rank();
        ElementType type = call.type();
        long total = call.elementCount();
        int chunks = ChunkLayout.chunkCount(total, maxChunkElements);
        int window = SendWindow.MESSAGES;
        int sent = 0;
        for (int chunk = 0; chunk < chunks; chunk++) {
            while (sent < chunks && sent < chunk + window) {
                int start = ChunkLayout.partStartByte(total, chunks, sent, type.bytes());
                int end = ChunkLayout.partStartByte(total, chunks, sent + 1, type.bytes());
                call.sendBeforeReceive(peer, MessageKind.RING_PAIR_EXCHANGE, sent, source, start, end - start);
                sent++;
            }
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int count = (ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start) / type.bytes();
            call.from(peer, MessageKind.RING_PAIR_EXCHANGE, chunk).reduceInto(result, start, source, count,
                    divisor(call));
        }
    }

    /** What the finished reduction is divided by: the world size for an average, else 1. */
    static int divisor(CollectiveCall call) {
        return call.op() == ReduceOp.AVG ? call.worldSize() : 1;
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
