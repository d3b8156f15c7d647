package io.ringstar.algorithm;

import java.nio.ByteBuffer;

/** Placeholder until the algorithms branch lands: ring all-gather. */
public final class RingAllGather {
    private RingAllGather() {
    }

    public static void run(CollectiveCall call, ByteBuffer result, int maxChunkElements) {
        throw new UnsupportedOperationException("all-gather is not written yet");
    }
}
