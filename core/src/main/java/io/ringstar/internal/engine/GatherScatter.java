package io.ringstar.internal.engine;

import io.ringstar.internal.algorithm.CollectiveCall;
import io.ringstar.internal.algorithm.RingAllGather;
import io.ringstar.internal.algorithm.RingReduceScatter;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.TensorBucket;
import io.ringstar.internal.tensor.TensorMemory;
import java.nio.ByteBuffer;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The bodies of the two collectives whose result is shaped unlike their input,
 * {@link CollectiveRequest.Kind#ALL_GATHER} and {@link CollectiveRequest.Kind#REDUCE_SCATTER}:
 * each makes its new result array and runs its ring over it. {@link CollectiveEngine} begins the
 * call before and handles any failure after, as for every other collective; the result is put in
 * the request's results as soon as it exists, so that the engine frees it if the call fails.
 */
final class GatherScatter {
    private GatherScatter() {
    }

    /** All-gathers the request's one tensor into a new array of shape {@code [worldSize, ...shape]}. */
    static void allGather(CollectiveCall call, CollectiveRequest request, int maxChunkElements) {
        INDArray tensor = request.sources()[0];
        ElementType type = call.type();
        int worldSize = call.worldSize();
        long[] shape = new long[tensor.rank() + 1];
        shape[0] = worldSize;
        System.arraycopy(tensor.shape(), 0, shape, 1, tensor.rank());
        INDArray result = TensorMemory.newDetached(type, shape);
        request.results()[0] = result;
        int blockBytes = Math.toIntExact(tensor.length() * type.bytes());
        ByteBuffer resultBytes = blockBytes == 0 ? ByteBuffer.allocateDirect(0)
                : TensorMemory.bytes(result, 0, blockBytes * worldSize);
        if (blockBytes > 0) {
            INDArray linear = TensorMemory.linearInCOrder(tensor);
            try {
                resultBytes.put(call.rank() * blockBytes, TensorMemory.bytes(linear, 0, blockBytes), 0, blockBytes);
            } finally {
                TensorMemory.closeIfCopy(tensor, linear);
            }
        }
        RingAllGather.run(call, resultBytes, maxChunkElements);
    }

    /**
     * Reduce-scatters the request's one tensor into a new 1-D array of this rank's part, with
     * {@code bucket}'s scratch space as the ring's working buffer.
     */
    static void reduceScatter(CollectiveCall call, CollectiveRequest request, TensorBucket bucket,
            int maxChunkElements) {
        INDArray input = request.sources()[0];
        ElementType type = call.type();
        long part = input.length() / call.worldSize();
        request.results()[0] = TensorMemory.newDetached(type, new long[] {part});
        int totalBytes = Math.toIntExact(input.length() * type.bytes());
        if (totalBytes == 0) {
            ByteBuffer empty = ByteBuffer.allocateDirect(0);
            RingReduceScatter.run(call, empty, empty, empty, maxChunkElements);
            return;
        }
        INDArray linear = TensorMemory.linearInCOrder(input);
        try {
            ByteBuffer source = TensorMemory.bytes(linear, 0, totalBytes);
            ByteBuffer scratch = bucket.scratch(input.length());
            ByteBuffer resultBytes = TensorMemory.bytes(request.results()[0], 0, Math.toIntExact(part * type.bytes()));
            RingReduceScatter.run(call, source, scratch, resultBytes, maxChunkElements);
        } finally {
            TensorMemory.closeIfCopy(input, linear);
        }
    }
}
