package io.ringstar.internal.algorithm;

import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Ring reduce-scatter, chunked and pipelined: the input of {@code n * m} elements is cut into
 * {@code n} segments of {@code m}, and rank {@code r} ends with segment {@code r} (elements
 * {@code [r*m, (r+1)*m)}) reduced with the call's op over all ranks.
 *
 * <p><b>Steps.</b> {@code n-1} steps; rank {@code r} sends only to {@code r+1} and receives only
 * from {@code r-1}. At step {@code t} it sends segment {@code r-t-1} (its own input at step 0, after
 * that the partial reduction received at step {@code t-1}) and receives segment {@code r-t-2}
 * (mod {@code n}), which it combines with its own input segment into the scratch buffer, or, at the
 * last step, where the segment received is {@code r} itself, into the result, dividing an average
 * by {@code n} in the same pass. Each segment is cut into {@code K} chunks of at most the chunk
 * size; the {@code (n-1)K} messages form one stream in which message {@code m} carries what arrived
 * as message {@code m-K}; sends run at most {@value SendWindow#MESSAGES} messages ahead of receives,
 * the last one before each receive going with the receive posted first.
 *
 * <p><b>Bytes</b>, for an input of {@code S} bytes: every rank sends and receives
 * {@code (n-1)/n * S}. Latency: {@code n-1} steps.
 *
 * <p><b>Order of operands.</b> Segment {@code g} starts as rank {@code g+1}'s input; each rank
 * {@code g+2, g+3, ..., g} in turn combines its own input with the partial it receives
 * ({@code x_{g+2} op x_{g+1}}, then {@code x_{g+3} op (...)}, and so on). It is computed on one
 * rank only, rank {@code g}, which keeps it.
 *
 * <p><b>Copies.</b> Every received byte is combined once, straight out of the transport's memory,
 * with the input into the scratch buffer or the result; sends go from the input at step 0 and
 * from the scratch buffer later. The input is never copied. The last step reads this rank's input
 * segment through a view that starts at it (one small object per call), since a receive reads its
 * other operand at the offset it writes.
 */
public final class RingReduceScatter {
    private RingReduceScatter() {
    }

    /**
     * Writes into {@code result} (segment {@code rank}, {@code elementCount / n} elements from
     * byte 0) the reduction over all ranks of that segment of each rank's {@code source}.
     * {@code source} holds {@link CollectiveCall#elementCount()} elements and is only read;
     * {@code scratch} holds as many and is left with partial reductions; the three buffers are
     * distinct.
     *
     * @throws IllegalArgumentException if the element count is not a multiple of the world size
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer scratch, ByteBuffer result,
            int maxChunkElements) {
        int worldSize = call.worldSize();
        long total = call.elementCount();
        if (total % worldSize != 0) {
            throw new IllegalArgumentException("reduce-scatter of " + total + " elements over " + worldSize
                    + " ranks: the count must be a multiple of the world size");
        }
        if (worldSize == 1) {
            call.copyWhole(source, result);
            return;
        }
        int rank = call.rank();
        ElementType type = call.type();
        long segmentElements = total / worldSize;
        int segmentBytes = Math.toIntExact(segmentElements * type.bytes());
        int chunks = ChunkLayout.chunkCount(segmentElements, maxChunkElements);
        int next = (rank + 1) % worldSize;
        int prev = (rank - 1 + worldSize) % worldSize;
        int messages = (worldSize - 1) * chunks;
        int lastStep = worldSize - 2;
        int window = SendWindow.MESSAGES;
        MessageKind kind = MessageKind.RING_REDUCE_SCATTER;
        int sent = 0;
        for (int m = 0; m < messages; m++) {
            while (sent < messages && sent < m + window && sent - chunks < m) {
                int segment = Math.floorMod(rank - sent / chunks - 1, worldSize);
                int chunk = sent % chunks;
                int start = ChunkLayout.partStartByte(segmentElements, chunks, chunk, type.bytes());
                int end = ChunkLayout.partStartByte(segmentElements, chunks, chunk + 1, type.bytes());
                ByteBuffer from = sent < chunks ? source : scratch;
                call.sendBeforeReceive(next, kind, sent, from, segment * segmentBytes + start, end - start);
                sent++;
            }
            int step = m / chunks;
            int chunk = m % chunks;
            int start = ChunkLayout.partStartByte(segmentElements, chunks, chunk, type.bytes());
            int count = (ChunkLayout.partStartByte(segmentElements, chunks, chunk + 1, type.bytes()) - start)
                    / type.bytes();
            if (step < lastStep) {
                int at = Math.floorMod(rank - step - 2, worldSize) * segmentBytes + start;
                call.from(prev, kind, m).reduceInto(scratch, at, source, count, 1);
            } else {
                // The last step: this rank's own segment, its input read at the segment's offsets.
                call.from(prev, kind, m).reduceInto(result, start, source, rank * segmentBytes + start, count,
                        RingAllReduce.divisor(call));
            }
        }
    }
}
