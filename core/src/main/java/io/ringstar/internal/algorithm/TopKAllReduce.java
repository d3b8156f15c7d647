package io.ringstar.internal.algorithm;

import io.ringstar.ReduceOp;
import io.ringstar.internal.compression.PairLayout;
import io.ringstar.internal.compression.PairSums;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.Reduction;
import java.nio.ByteBuffer;

/**
 * All-reduce (SUM or AVG) of top-k pairs, for {@code topk:F} compression of the ring and the
 * communicator: a ring all-gather of every rank's block of pairs, then, on every rank, the pairs
 * summed in rank order into a zeroed dense result (divided by {@code n} for AVG).
 *
 * <p><b>Steps.</b> {@link RingAllGather}'s ring, over blocks of bytes: every block has the same size,
 * known from the {@link PairLayout}, cut into {@code K} chunks of at most the chunk size; {@code n-1}
 * steps, rank {@code r} sends to {@code r+1} and receives from {@code r-1}, at most
 * {@value SendWindow#MESSAGES} messages ahead.
 *
 * <p><b>Bytes</b>, for a block of {@code P} bytes ({@code P} about {@code (4 + b) F S / b} for an
 * input of {@code S} bytes of {@code b}-byte values): every rank sends and receives
 * {@code (n-1) P}. Unlike the dense ring, this grows with {@code n}: top-k pays off while
 * {@code (n-1)(4 + b)F/b} stays below {@code 2(n-1)/n}.
 *
 * <p><b>Bit-identical results.</b> Every rank adds the same pairs in the same (rank) order into
 * zeros. The result is the one {@link TopKStarReduce} computes, bit for bit.
 *
 * <p><b>Memory.</b> {@code n} blocks (the caller's buffer) besides the input and result.
 */
public final class TopKAllReduce {
    private TopKAllReduce() {
    }

    /**
     * Gathers every rank's block into {@code gathered} ({@code n} blocks of
     * {@link PairLayout#blockBytes()} back to back, this rank's already at its rank's offset) and
     * writes the sum of all pairs into {@code result}, {@code layout.total()} elements from byte 0.
     */
    public static void run(CollectiveCall call, PairLayout layout, ByteBuffer gathered, ByteBuffer result,
            int maxChunkBytes) {
        int blockBytes = layout.blockBytes();
        if (call.worldSize() > 1) {
            RingAllGather.gather(call, MessageKind.TOPK_ALL_GATHER, gathered, blockBytes, 1, maxChunkBytes);
        }
        ElementType type = layout.type();
        int total = Math.toIntExact(layout.total());
        PairSums.zero(result, 0, total * type.bytes());
        for (int r = 0; r < call.worldSize(); r++) {
            int base = r * blockBytes;
            for (int s = 0; s < layout.segments(); s++) {
                PairSums.add(type, result, total, gathered, base + layout.indexOffset(s),
                        base + layout.valueOffset(s), layout.keep(s));
            }
        }
        if (call.op() == ReduceOp.AVG) {
            Reduction.divide(type, result, 0, total, call.worldSize());
        }
    }
}
