package io.ringstar.internal.algorithm;

/**
 * How the sharded star cuts one collective's elements among its servers. The elements are cut into
 * contiguous partitions of near-equal size, at least one per chunk (so a partition is at most a
 * chunk, one message) and at least one per server when there are enough elements (so a call smaller
 * than the chunk size still keeps every server busy), and partition {@code p} is served by rank
 * {@code p mod servers}. Ranks {@code 0 … servers-1} thus each serve every {@code servers}-th
 * partition: about {@code 1/servers} of every call, spread evenly over the call (BytePS deals out
 * bounded partitions the same way; ps-lite instead gives each server one contiguous key range,
 * which would make a server's load depend on which tensors a call holds). Every rank computes the
 * same cuts from the element count, so none is sent.
 *
 * <p>The element-wise results do not depend on the partitions: each element is reduced in rank
 * order by whichever server holds it, so any number of servers gives the same bits.
 */
public final class StarPartitions {
    private StarPartitions() {
    }

    /**
     * How many partitions {@code total} elements are cut into: one per chunk of at most
     * {@code maxChunkElements}, and at least {@code min(servers, total)}; at least 1 (an empty call
     * still exchanges one empty partition, so ranks that disagree are caught).
     */
    public static int count(long total, int maxChunkElements, int servers) {
        return (int) Math.max(ChunkLayout.chunkCount(total, maxChunkElements), Math.min(servers, total));
    }

    /** First element of {@code partition} when {@code total} elements are cut into {@code count}. */
    public static long start(long total, int count, int partition) {
        return ChunkLayout.partStart(total, count, partition);
    }

    /** The rank that serves {@code partition}. */
    public static int server(int partition, int servers) {
        return partition % servers;
    }
}
