package io.ringstar.algorithm;

import io.ringstar.protocol.MessageKind;
import io.ringstar.tensor.ElementType;
import io.ringstar.tensor.Reduction;
import java.nio.ByteBuffer;

/**
 * All-reduce through the star's servers (the parameter server), ranks {@code 0 … servers-1}
 * ({@link CollectiveCall#servers()}, 1 by default: rank 0 alone). The call's elements are cut into
 * partitions ({@link StarPartitions}); every rank sends each partition to the server that holds
 * it, that server reduces the partition in rank order as the parts arrive, dividing with the last
 * (for an average), and sends the result back to every rank at once. Every rank, servers included,
 * is also a worker. With {@code s} servers each server's link carries about {@code (n-1)/s} times
 * the data each way; with {@code s = n} every link carries what a ring's does.
 *
 * <p><b>Same bits whatever the servers.</b> Each element is reduced in rank order, {@code ((x0 ⊕ x1)
 * ⊕ x2) ⊕ …}, by whichever rank serves it, so the result does not depend on the number of servers
 * and is the same on every rank. (A server {@code s > 0} holds {@code x0} only once it has
 * arrived, and then combines its own values at their place in the order.)
 *
 * <p><b>Order on the wire.</b> Messages between two ranks are first-in first-out, so each rank
 * sends and receives partitions in increasing order: a rank goes through the partitions in order,
 * serving its own or taking the result of the others', and sends the parts of later partitions
 * ahead, at most {@value #WINDOW} beyond the one it is at, but never past one it serves and has
 * not finished (whose results must reach a peer before any later part does). Every rank at
 * partition {@code p} has therefore sent its part of {@code p}: the rank furthest behind can
 * always go on, so the group cannot deadlock.
 *
 * <p><b>Memory.</b> A server reduces straight into its result, out of the transport's memory as
 * the parts arrive (see {@link RingAllReduce} on copies). Only a server other than rank 0 working
 * in place (the communicator's all-reduce), which must keep its own values until their turn, keeps
 * its running reduction in a scratch buffer of one partition, at most one chunk. A server's memory
 * grows with its part, never with the world size.
 */
public final class StarReduce {
    /** Partitions a rank may send ahead of the one it is at. */
    static final int WINDOW = 4;

    private StarReduce() {
    }

    /**
     * Writes into {@code result} the reduction (the call's op; the average for the aggregators) over
     * all ranks of each rank's {@code source} (the two may be one buffer; {@code source} is only read).
     */
    public static void run(CollectiveCall call, ByteBuffer source, ByteBuffer result, int maxChunkElements) {
        int worldSize = call.worldSize();
        if (worldSize == 1) {
            call.copyWhole(source, result);
            return;
        }
        int rank = call.rank();
        int servers = Math.min(call.servers(), worldSize);
        int elementBytes = call.type().bytes();
        long total = call.elementCount();
        int partitions = StarPartitions.count(total, maxChunkElements, servers);
        int sent = 0;
        for (int partition = 0; partition < partitions; partition++) {
            int window = Math.min(partitions, partition + WINDOW + 1);
            while (sent < window) {
                int server = StarPartitions.server(sent, servers);
                if (server == rank) {
                    if (sent >= partition) {
                        break;
                    }
                    sent++;
                    continue;
                }
                int start = byteAt(total, partitions, sent, elementBytes);
                call.send(server, MessageKind.STAR_REDUCE, sent, source, start,
                        byteAt(total, partitions, sent + 1, elementBytes) - start);
                sent++;
            }
            int server = StarPartitions.server(partition, servers);
            int start = byteAt(total, partitions, partition, elementBytes);
            int length = byteAt(total, partitions, partition + 1, elementBytes) - start;
            if (server == rank) {
                serve(call, source, result, partition, start, length);
                for (int peer = 0; peer < worldSize; peer++) {
                    if (peer != rank) {
                        call.send(peer, MessageKind.STAR_REDUCE_RESULT, partition, result, start, length);
                    }
                }
            } else {
                call.receiveCopy(server, MessageKind.STAR_REDUCE_RESULT, partition, result, start, length);
            }
        }
    }

    /**
     * Reduces one partition, bytes {@code [start, start+length)}, in rank order into {@code result}:
     * this rank's own values from {@code source}, every other rank's as its part arrives.
     */
    private static void serve(CollectiveCall call, ByteBuffer source, ByteBuffer result, int partition, int start,
            int length) {
        int rank = call.rank();
        int worldSize = call.worldSize();
        ElementType type = call.type();
        int count = length / type.bytes();
        int divisor = RingAllReduce.divisor(call);
        // Where the running reduction is kept until the last rank's values make it the result: the
        // result itself, unless this rank works in place and its own values come after rank 0's.
        ByteBuffer work = rank == 0 || source != result ? result : call.scratch(length);
        int workStart = work == result ? start : 0;
        ByteBuffer sofar;
        int sofarStart;
        if (rank == 0) {
            sofar = source;
            sofarStart = start;
        } else {
            call.receiveCopy(0, MessageKind.STAR_REDUCE, partition, work, workStart, length);
            sofar = work;
            sofarStart = workStart;
        }
        for (int next = 1; next < worldSize; next++) {
            boolean last = next == worldSize - 1;
            ByteBuffer into = last ? result : work;
            int intoStart = last ? start : workStart;
            int divideBy = last ? divisor : 1;
            if (next == rank) {
                Reduction.combine(call.op(), type, into, intoStart, sofar, sofarStart, source, start, count, divideBy);
            } else {
                call.receiveReduce(next, MessageKind.STAR_REDUCE, partition, into, intoStart, sofar, sofarStart, count,
                        divideBy);
            }
            sofar = into;
            sofarStart = intoStart;
        }
    }

    private static int byteAt(long total, int partitions, int partition, int elementBytes) {
        return Math.toIntExact(StarPartitions.start(total, partitions, partition) * elementBytes);
    }
}
