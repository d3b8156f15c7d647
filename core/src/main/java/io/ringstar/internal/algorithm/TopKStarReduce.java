package io.ringstar.internal.algorithm;

import io.ringstar.ReduceOp;
import io.ringstar.internal.compression.PairLayout;
import io.ringstar.internal.compression.PairSums;
import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.Reduction;
import java.nio.ByteBuffer;

/**
 * All-reduce (SUM or AVG) of top-k pairs through the star's servers, for {@code topk:F}
 * compression of the parameter server: workers send their pairs sparse, servers send dense sums back.
 *
 * <p><b>Partitions.</b> Each selection segment of the {@link PairLayout} (a chunk of the window) is
 * one partition, served by rank {@code segment mod servers}. Every rank (servers too) sends the
 * indices and then the values of its pairs of a partition to the partition's server, two messages
 * of fixed size ({@code 4 k_s} and {@code b k_s} bytes); the server zeroes the partition in its
 * result, adds every rank's pairs into it in rank order (its own at its place), divides for AVG, and
 * sends the dense partition to every other rank, which copies it into its result.
 *
 * <p><b>Order.</b> The partitions go in rounds of one per server (partitions {@code [j s, (j+1) s)}
 * for {@code s} servers), so every server works at once, and the pairs of round {@code j} go one
 * round ahead of its results: in step {@code j} every rank sends its pairs of round {@code j}, a
 * server then takes in and sums its partition of the round, and then the results of round
 * {@code j-1} are sent and received. Both ends of a link therefore see its messages in the same
 * order (pairs of round {@code j}, then the result of round {@code j-1}), and no link holds more
 * than two rounds' messages.
 *
 * <p><b>Bytes</b>, per call of {@code S} bytes of {@code b}-byte values: a worker sends about
 * {@code (4 + b) F S / b} of pairs and receives {@code S} dense; with one server, the server receives
 * {@code (n-1)} times the pairs and sends {@code (n-1) S}.
 *
 * <p><b>Bit-identical results.</b> Each partition is summed on its server only, in rank order into
 * zeros, and copied: the same bits as {@link TopKAllReduce}, whatever the number of servers.
 *
 * <p><b>Memory.</b> Besides input and result, the rank's block of pairs and room for one
 * partition's pairs from one worker: a server's memory grows with its partitions, not with {@code n}.
 */
public final class TopKStarReduce {
    private TopKStarReduce() {
    }

    /**
     * Writes the sum (or average) of every rank's pairs into {@code result}, {@code layout.total()}
     * elements from byte 0. {@code pairs} holds this rank's block at byte 0 and has room for
     * {@link PairLayout#blockBytes()} bytes more after it, where a server takes in a worker's pairs.
     */
    public static void run(CollectiveCall call, PairLayout layout, ByteBuffer pairs, ByteBuffer result) {
        int segments = layout.segments();
        int servers = call.servers();
        int rounds = (segments + servers - 1) / servers;
        for (int round = 0; round <= rounds; round++) {
            if (round < rounds) {
                int first = round * servers;
                int end = Math.min(segments, first + servers);
                for (int segment = first; segment < end; segment++) {
                    sendPairs(call, layout, segment, pairs);
                }
                for (int segment = first; segment < end; segment++) {
                    if (StarPartitions.server(segment, servers) == call.rank()) {
                        sumPairs(call, layout, segment, pairs, result);
                    }
                }
            }
            if (round > 0) {
                int first = (round - 1) * servers;
                for (int segment = first; segment < Math.min(segments, first + servers); segment++) {
                    resultOf(call, layout, segment, result);
                }
            }
        }
    }

    /** Sends this rank's indices and values of {@code segment} to its server, unless this rank is the server. */
    private static void sendPairs(CollectiveCall call, PairLayout layout, int segment, ByteBuffer pairs) {
        int server = StarPartitions.server(segment, call.servers());
        if (server != call.rank()) {
            int keep = layout.keep(segment);
            MessageKind kind = MessageKind.TOPK_STAR_PAIRS;
            call.send(server, kind, 2 * segment, pairs, layout.indexOffset(segment), keep * PairLayout.INDEX_BYTES);
            call.send(server, kind, 2 * segment + 1, pairs, layout.valueOffset(segment), keep * layout.type().bytes());
        }
    }

    /** As the server of {@code segment}: every rank's pairs of it, in rank order, into zeros in the result. */
    private static void sumPairs(CollectiveCall call, PairLayout layout, int segment, ByteBuffer pairs,
            ByteBuffer result) {
        int keep = layout.keep(segment);
        int indexBytes = keep * PairLayout.INDEX_BYTES;
        ElementType type = layout.type();
        int valueBytes = keep * type.bytes();
        MessageKind kind = MessageKind.TOPK_STAR_PAIRS;
        long start = layout.segmentStart(segment);
        int length = (int) (layout.segmentStart(segment + 1) - start);
        int startByte = (int) (start * type.bytes());
        PairSums.zero(result, startByte, length * type.bytes());
        // Indices count from the window's start: a view of the result from byte 0 takes them as they are.
        int scratch = layout.blockBytes();
        for (int r = 0; r < call.worldSize(); r++) {
            if (r == call.rank()) {
                PairSums.add(type, result, layout.total(), pairs, layout.indexOffset(segment),
                        layout.valueOffset(segment), keep);
                continue;
            }
            call.receiveCopy(r, kind, 2 * segment, pairs, scratch, indexBytes);
            call.receiveCopy(r, kind, 2 * segment + 1, pairs, scratch + indexBytes, valueBytes);
            int outside = firstOutside(pairs, scratch, keep, start, start + length);
            if (outside >= 0) {
                // Such a pair would change another server's part.
                throw new IllegalStateException("rank " + call.rank() + ": rank " + r + " sent a top-k pair for "
                        + "element " + outside + " to the partition of elements [" + start + ", " + (start + length)
                        + ")");
            }
            PairSums.add(type, result, layout.total(), pairs, scratch, scratch + indexBytes, keep);
        }
        if (call.op() == ReduceOp.AVG) {
            Reduction.divide(type, result, startByte, length, call.worldSize());
        }
    }

    private static void resultOf(CollectiveCall call, PairLayout layout, int segment, ByteBuffer result) {
        int server = StarPartitions.server(segment, call.servers());
        int size = layout.type().bytes();
        int startByte = (int) (layout.segmentStart(segment) * size);
        int bytes = (int) (layout.segmentStart(segment + 1) * size) - startByte;
        if (server == call.rank()) {
            for (int r = 0; r < call.worldSize(); r++) {
                if (r != server) {
                    call.send(r, MessageKind.TOPK_STAR_RESULT, segment, result, startByte, bytes);
                }
            }
        } else {
            call.receiveCopy(server, MessageKind.TOPK_STAR_RESULT, segment, result, startByte, bytes);
        }
    }

    /** The first index of the {@code count} pairs at {@code offset} outside {@code [from, to)}, or -1. */
    private static int firstOutside(ByteBuffer pairs, int offset, int count, long from, long to) {
        for (int p = 0; p < count; p++) {
            int index = pairs.getInt(offset + p * PairLayout.INDEX_BYTES);
            if (index < from || index >= to) {
                return index;
            }
        }
        return -1;
    }
}
