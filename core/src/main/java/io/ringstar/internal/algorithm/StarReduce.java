package io.ringstar.internal.algorithm;

import io.ringstar.internal.protocol.MessageKind;
import io.ringstar.internal.tensor.ElementType;
import io.ringstar.internal.tensor.Reduction;
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
 * <p><b>Order on the wire.</b> Messages between two ranks are first-in first-out, so both ends
 * must agree on their order. The partitions go in rounds of one per server (round {@code t} holds
 * partitions {@code t·s … t·s+s-1}, server {@code r} the {@code r}-th of them), and in every round
 * each rank sends its parts of the round, a server then reduces its partition and sends its result
 * to every rank, and each rank takes the round's other results. So between any two ranks a round's
 * parts always come before its results, and those before the next round's parts. To keep the links
 * busy, a server sends the next round's parts as soon as it has sent its result, before it waits for
 * the others'; a rank that serves nothing sends up to {@value #WINDOW} rounds ahead (with one
 * server, every rank but 0). A server waits only for parts that every rank sends before it waits
 * for anything of that round, so the group cannot deadlock.
 *
 * <p><b>Memory.</b> A server reduces straight into its result, out of the transport's memory as
 * the parts arrive (see {@link RingAllReduce} on copies). Only a server other than rank 0 working
 * in place (the communicator's all-reduce), which must keep its own values until their turn, keeps
 * its running reduction in a scratch buffer of one partition, at most one chunk. A server's memory
 * grows with its part, never with the world size.
 */
public final class StarReduce {
    /** Rounds a rank that serves nothing may send ahead of the one it is at. */
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
        long total = call.elementCount();
        int partitions = StarPartitions.count(total, maxChunkElements, servers);
        int rounds = (partitions + servers - 1) / servers;
        boolean server = rank < servers;
        int sentRounds = 0;
        for (int round = 0; round < rounds; round++) {
            // A server sends a round's parts only once it has sent the results of the one before
            // (they must reach each peer first); a rank that only works runs ahead.
            int sendUpTo = server ? round + 1 : Math.min(rounds, round + 1 + WINDOW);
            while (sentRounds < sendUpTo) {
                sendParts(call, source, total, partitions, servers, sentRounds++);
            }
            int own = round * servers + rank;
            if (server && own < partitions) {
                int start = byteAt(call, total, partitions, own);
                int length = byteAt(call, total, partitions, own + 1) - start;
                serve(call, source, result, own, start, length);
                for (int peer = 0; peer < worldSize; peer++) {
                    if (peer != rank) {
                        call.send(peer, MessageKind.STAR_REDUCE_RESULT, own, result, start, length);
                    }
                }
            }
            if (server && sentRounds < rounds) {
                // The next round's parts go before this round's results are awaited: the servers
                // reduce them while those results travel.
                sendParts(call, source, total, partitions, servers, sentRounds++);
            }
            for (int partition = round * servers; partition < Math.min(partitions, (round + 1) * servers);
                    partition++) {
                int holder = StarPartitions.server(partition, servers);
                if (holder != rank) {
                    int start = byteAt(call, total, partitions, partition);
                    call.receiveCopy(holder, MessageKind.STAR_REDUCE_RESULT, partition, result, start,
                            byteAt(call, total, partitions, partition + 1) - start);
                }
            }
        }
    }

    /** Sends this rank's part of every partition of {@code round} to its server (but its own). */
    private static void sendParts(CollectiveCall call, ByteBuffer source, long total, int partitions, int servers,
            int round) {
        for (int partition = round * servers; partition < Math.min(partitions, (round + 1) * servers); partition++) {
            int holder = StarPartitions.server(partition, servers);
            if (holder != call.rank()) {
                int start = byteAt(call, total, partitions, partition);
                call.send(holder, MessageKind.STAR_REDUCE, partition, source, start,
                        byteAt(call, total, partitions, partition + 1) - start);
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
                call.from(next, MessageKind.STAR_REDUCE, partition).reduceInto(into, intoStart, sofar, sofarStart,
                        count, divideBy);
            }
            sofar = into;
            sofarStart = intoStart;
        }
    }

    private static int byteAt(CollectiveCall call, long total, int partitions, int partition) {
        return Math.toIntExact(StarPartitions.start(total, partitions, partition) * call.type().bytes());
    }
}
