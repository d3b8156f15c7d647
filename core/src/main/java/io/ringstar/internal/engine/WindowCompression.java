package io.ringstar.internal.engine;

import io.ringstar.ReduceOp;
import io.ringstar.config.Compression;
import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.algorithm.TopKAllReduce;
import io.ringstar.internal.algorithm.TopKStarReduce;
import io.ringstar.internal.compression.ErrorFeedback;
import io.ringstar.internal.compression.HalfPrecision;
import io.ringstar.internal.compression.PairLayout;
import io.ringstar.internal.compression.TopKSelector;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Option {@value io.ringstar.config.AggregatorOptions#COMPRESSION_OPTION} applied to one window of a
 * {@link CollectiveEngine}: which windows are compressed, the element type their messages carry,
 * and the compressed run itself. Only SUM and AVG reductions of FLOAT and DOUBLE groups by a
 * collective that allows it ({@link CollectiveRequest.Compressible}) are compressed; HALF, BFLOAT16 and integer
 * groups, other ops, broadcasts, reduces to a root, all-gathers and reduce-scatters go as they are.
 *
 * <ul>
 *   <li>{@code fp16}, {@code bf16}: the window is rounded into a scratch buffer of 16-bit values
 *       ({@link HalfPrecision}), the collective's own algorithm runs there with element type HALF or
 *       BFLOAT16 (sums in float32, rounded once per value written), and the result is widened back.</li>
 *   <li>{@code topk:F}: the window goes through the residual and the selection ({@link TopKSelector},
 *       {@link ErrorFeedback}), and the pairs through {@link TopKAllReduce} or {@link TopKStarReduce}.</li>
 * </ul>
 * Owns its scratch buffer (grown to the largest window, then reused) and the residuals. Not thread-safe.
 */
final class WindowCompression {
    private final Compression compression;
    private final int worldSize;
    /** The option's chunk size: a message carries at most this many bytes of a window's elements. */
    private final int chunkBytes;
    private final ErrorFeedback feedback = new ErrorFeedback();
    private final TopKSelector selector = new TopKSelector();
    private final PairLayout pairs = new PairLayout();
    /** The 16-bit copy of a window, or a rank's block of pairs (and the others' or a worker's after it). */
    private ByteBuffer scratch = ByteBuffer.allocateDirect(0).order(ByteOrder.LITTLE_ENDIAN);

    WindowCompression(Compression compression, int worldSize, int chunkBytes) {
        this.compression = compression;
        this.worldSize = worldSize;
        this.chunkBytes = chunkBytes;
    }

    /** Whether a window of {@code type} reduced with {@code op} by a collective that is {@code compressible} is. */
    boolean applies(CollectiveRequest.Compressible compressible, ReduceOp op, ElementType type) {
        return compression.kind() != Compression.Kind.NONE && compressible != CollectiveRequest.Compressible.NO
                && (op == ReduceOp.SUM || op == ReduceOp.AVG)
                && (type == ElementType.FLOAT || type == ElementType.DOUBLE);
    }

    /** The element type the messages of a compressed window of {@code type} carry in their headers. */
    ElementType wireType(ElementType type) {
        return compression.kind() == Compression.Kind.TOPK ? type : HalfPrecision.wireType(compression);
    }

    /** The largest compressed window of {@code type}, at most {@code dense}: n blocks of pairs fit one buffer. */
    long windowElements(ElementType type, long dense) {
        return compression.kind() == Compression.Kind.TOPK
                ? Math.min(dense, PairLayout.maxWindowElements(type, worldSize)) : dense;
    }

    /**
     * Runs one compressed window of {@code request}, the {@code call}'s element count of
     * {@code group} from element {@code from}: {@code source} into {@code result} (possibly one
     * buffer), both from byte 0. fp16 and bf16 run the request's own algorithm on the narrowed
     * values; top-k keeps its residual under the request's layout.
     */
    void run(CollectiveCall call, CollectiveRequest request, TensorLayout.Group group, ByteBuffer source,
            ByteBuffer result, long from) {
        ElementType type = group.type();
        int count = Math.toIntExact(call.elementCount());
        int maxChunkBytes = Math.max(1, chunkBytes / type.bytes()) * type.bytes();
        if (compression.kind() != Compression.Kind.TOPK) {
            ElementType wire = HalfPrecision.wireType(compression);
            ByteBuffer half = scratch(count * wire.bytes());
            HalfPrecision.narrow(type, wire, source, half, count);
            request.algorithm().run(call, half, half, Math.max(1, maxChunkBytes / wire.bytes()));
            HalfPrecision.widen(type, wire, half, result, count);
            return;
        }
        int maxChunkElements = Math.max(1, maxChunkBytes / type.bytes());
        pairs.update(count, maxChunkElements, compression.fraction(), type, worldSize);
        int blockBytes = pairs.blockBytes();
        boolean ring = request.compressible() == CollectiveRequest.Compressible.RING;
        ByteBuffer buffer = scratch(blockBytes * (ring ? worldSize : 2));
        ByteBuffer residual = feedback.residual(request.layout().fingerprint(), type, group.elementCount());
        selector.select(pairs, source, residual, Math.toIntExact(from * type.bytes()), buffer,
                ring ? call.rank() * blockBytes : 0);
        if (ring) {
            TopKAllReduce.run(call, pairs, buffer, result, maxChunkElements * type.bytes());
        } else {
            TopKStarReduce.run(call, pairs, buffer, result);
        }
    }

    /** The residuals, for tests that check what was sent against what was kept. */
    ErrorFeedback feedback() {
        return feedback;
    }

    /** Bytes held between calls: the scratch buffer and the residuals. */
    long bufferBytes() {
        return scratch.capacity() + feedback.bytes();
    }

    /** Frees the scratch buffer and the residuals. */
    void clear() {
        scratch = ByteBuffer.allocateDirect(0).order(ByteOrder.LITTLE_ENDIAN);
        feedback.clear();
    }

    private ByteBuffer scratch(long bytes) {
        if (scratch.capacity() < bytes) {
            scratch = ByteBuffer.allocateDirect(Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
        }
        return scratch;
    }
}
