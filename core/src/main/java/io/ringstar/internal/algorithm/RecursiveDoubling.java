package io.ringstar.internal.algorithm;

import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import java.nio.ByteBuffer;

/**
 * Latency-optimal all-reduce by recursive doubling, and the barrier built the same way.
 *
 * <p><b>Steps.</b> Let {@code p} be the largest power of two at most {@code n} and {@code q = n - p}.
 * <ol>
 * <li>Fold-in: rank {@code r >= p} sends its whole input to rank {@code r - p}, which combines it
 *     with its own input into its result.</li>
 * <li>Doubling: ranks {@code r < p} run {@code log2 p} rounds; in round {@code k} rank {@code r}
 *     sends its whole current vector to {@code r ^ 2^k} and combines the partner's into its own.
 *     The last round divides an average by {@code n}, in the same pass as its combine.</li>
 * <li>Fold-out: rank {@code r < q} sends its finished result to {@code r + p}, which copies it.</li>
 * </ol>
 * Every message is cut into chunks of at most the configured chunk size. The rounds form one
 * stream: chunk {@code c} of round {@code k+1} goes out as soon as chunk {@code c} of round
 * {@code k} is combined, at most {@value #WINDOW} messages ahead of the receives, so the next chunk
 * is on the wire while one is combined; fold-in and fold-out chunks are taken and passed on the
 * same way, chunk by chunk.
 *
 * <p><b>Bytes</b>, for {@code S} bytes of input: a rank {@code r >= p} sends {@code S} and receives
 * {@code S}; a rank {@code r < q} sends and receives {@code (log2 p + 1) S}; the others
 * {@code log2 p * S}. Latency: {@code log2 p} rounds, plus 2 when {@code n} is not a power of two.
 *
 * <p><b>Bit-identical results.</b> In every round both partners combine the same two operands, in
 * opposite order ({@code a op b} here, {@code b op a} there), and IEEE addition, multiplication,
 * minimum and maximum are commutative; by induction all {@code 2^(k+1)} ranks of a block hold the
 * same bits after round {@code k}. The ranks {@code >= p} copy a finished result.
 *
 * <p><b>Copies.</b> Every received byte is combined (or, in the fold-out, copied) once, straight
 * out of the transport's memory into the result; sends go from the input in the first round (from
 * the result once the fold-in has been combined into it) and from the result afterwards. The input
 * is never copied and nothing is allocated.
 */
public final class RecursiveDoubling {
    /** Messages a rank may send ahead of the ones it has received. */
    static final int WINDOW = 2;

    private RecursiveDoubling() {
    }

    /**
     * Writes into {@code result} the reduction (the call's op) over all ranks of each rank's
     * {@code source}; both hold {@link CollectiveCall#elementCount()} elements from byte 0, and
     * may be one buffer. {@code source} is only read.
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            call.copyWhole(source, result);
            return;
        }
        int rank = call.rank();
        int powerOfTwo = Integer.highestOneBit(worldSize);
        int extra = worldSize - powerOfTwo;
        ElementType type = call.type();
        long total = call.elementCount();
        int chunks = ChunkLayout.chunkCount(total, maxChunkElements);
        MessageKind kind = MessageKind.DOUBLING_ALL_REDUCE;
        if (rank >= powerOfTwo) {
            // Fold-in (indices 0..K-1 on this pair), then the finished result back (K..2K-1).
            for (int chunk = 0; chunk < chunks; chunk++) {
                int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
                int end = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes());
                call.send(rank - powerOfTwo, kind, chunk, source, start, end - start);
            }
            for (int chunk = 0; chunk < chunks; chunk++) {
                int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
                int end = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes());
                call.receiveCopy(rank - powerOfTwo, kind, chunks + chunk, result, start, end - start);
            }
            return;
        }
        boolean foldsIn = rank < extra;
        int rounds = Integer.numberOfTrailingZeros(powerOfTwo);
        int messages = rounds * chunks;
        int lastRound = rounds - 1;
        int sent = 0;
        for (int m = 0; m < messages; m++) {
            // Message s may go once message s-K has been combined (or s < K: this rank's own data).
            while (sent < messages && sent < m + WINDOW && sent - chunks < m) {
                int chunk = sent % chunks;
                int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
                int end = ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes());
                ByteBuffer from = result;
                if (sent < chunks) {
                    if (foldsIn) {
                        // The partner's input joins this one just before the chunk is first needed.
                        call.from(rank + powerOfTwo, kind, chunk).reduceInto(result, start, source,
                                (end - start) / type.bytes(), 1);
                    } else {
                        from = source;
                    }
                }
                call.send(rank ^ (1 << (sent / chunks)), kind, chunk, from, start, end - start);
                sent++;
            }
            int round = m / chunks;
            int chunk = m % chunks;
            int start = ChunkLayout.partStartByte(total, chunks, chunk, type.bytes());
            int count = (ChunkLayout.partStartByte(total, chunks, chunk + 1, type.bytes()) - start) / type.bytes();
            // Round 0 combines into the result what a rank without a fold-in still has in its input.
            ByteBuffer plus = round == 0 && !foldsIn ? source : result;
            call.from(rank ^ (1 << round), kind, chunk).reduceInto(result, start, plus, count,
                    round == lastRound ? RingAllReduce.divisor(call) : 1);
            if (round == lastRound && foldsIn) {
                call.send(rank + powerOfTwo, kind, chunks + chunk, result, start, count * type.bytes());
            }
        }
    }

    /**
     * Returns once every rank has entered the call: the pattern of {@link #run} with header-only
     * messages of kind {@link MessageKind#BARRIER}, {@code log2 p} rounds (plus 2 when the world
     * size is not a power of two). Every message is checked against this rank's call, so a rank in
     * another collective, or at another sequence number, fails the barrier on every rank.
     */
    public static void barrier(CollectiveCall call) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            return;
        }
        int rank = call.rank();
        int powerOfTwo = Integer.highestOneBit(worldSize);
        int extra = worldSize - powerOfTwo;
        MessageKind kind = MessageKind.BARRIER;
        if (rank >= powerOfTwo) {
            call.sendNotice(rank - powerOfTwo, kind, 0);
            call.receiveNotice(rank - powerOfTwo, kind, 1);
            return;
        }
        if (rank < extra) {
            call.receiveNotice(rank + powerOfTwo, kind, 0);
        }
        for (int bit = 1; bit < powerOfTwo; bit <<= 1) {
            call.sendNotice(rank ^ bit, kind, 0);
            call.receiveNotice(rank ^ bit, kind, 0);
        }
        if (rank < extra) {
            call.sendNotice(rank + powerOfTwo, kind, 1);
        }
    }
}
