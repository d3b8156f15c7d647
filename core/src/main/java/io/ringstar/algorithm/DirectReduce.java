package io.ringstar.algorithm;

import java.nio.ByteBuffer;

/** Placeholder until the algorithms branch lands: reduce to a root. */
public final class DirectReduce {
    private DirectReduce() {
    }

    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        throw new UnsupportedOperationException("reduce is not written yet");
    }
}
