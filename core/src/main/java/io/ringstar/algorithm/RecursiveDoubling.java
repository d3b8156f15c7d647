package io.ringstar.algorithm;

import java.nio.ByteBuffer;

/** Placeholder until the algorithms branch lands: recursive-doubling all-reduce and barrier. */
public final class RecursiveDoubling {
    private RecursiveDoubling() {
    }

    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        throw new UnsupportedOperationException("recursive doubling is not written yet");
    }

    public static void barrier(CollectiveCall call) {
        throw new UnsupportedOperationException("barrier is not written yet");
    }
}
