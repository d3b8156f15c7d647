package io.ringstar.internal.algorithm;

/**
 * How far the sends of a ring's pipelined stream (the all-reduce's, the reduce-scatter's, the
 * all-gather's, the pair exchange's) may run ahead of its receives: {@value #MESSAGES} messages,
 * so that the next chunk is on the wire while the current one is being reduced.
 *
 * <p>A budget in bytes instead (2 MiB: as deep as today's at the default 1 MiB chunk, 8 messages
 * of 256 KiB chunks) was measured and dropped: over Netty on loopback, 2 ranks on 2 cores, 256 KiB
 * chunks 8 or 4 ahead were no faster than 2 ahead, and slower at 16 and 32 MiB (ALGORITHMS.md,
 * "Window and chunks"). What helps large messages there is a smaller chunk with the same shallow
 * window, which is the chunk size's business ({@code chunkBytes}), not the window's.
 */
final class SendWindow {
    /** Messages a rank may send ahead of the ones it has received. */
    static final int MESSAGES = 2;

    private SendWindow() {
    }
}
