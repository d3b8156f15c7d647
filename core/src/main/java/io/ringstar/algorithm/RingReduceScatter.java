package io.ringstar.algorithm;

import java.nio.ByteBuffer;

/** Placeholder until the algorithms branch lands: ring reduce-scatter. */
public final class RingReduceScatter {
    private RingReduceScatter() {
    }

    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer scratch, ByteBuffer result,
            int maxChunkElements) {
        throw new UnsupportedOperationException("reduce-scatter is not written yet");
    }
}
