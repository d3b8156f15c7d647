package io.ringstar.internal.algorithm;

import io.ringstar.internal.protocol.MessageKind;
import java.nio.ByteBuffer;

/**
 * Broadcast from rank 0 through the star's servers, ranks {@code 0 … servers-1}
 * ({@link CollectiveCall#servers()}, 1 by default). Each worker first sends rank 0 a header-only
 * notice that it has entered the broadcast; rank 0 checks every notice, so a worker with another
 * layout, or one in another operation, makes rank 0 fail too. Rank 0 then goes through the
 * partitions ({@link StarPartitions}) in order: one it serves itself it sends to every rank; any
 * other it sends once, to its server, which passes it on to every rank but rank 0. With one server
 * this is rank 0 sending everything to everyone; with {@code s} servers rank 0 sends about
 * {@code (n-1)/s + 1} copies of the data instead of {@code n-1}.
 *
 * <p>Every rank sends and receives partitions in increasing order, which keeps the messages
 * between two ranks in the order both expect. A rank copies each partition once, straight out of
 * the transport's memory into its result (the result array itself for one 'c'-order tensor per
 * type); a server passes it on from there.
 */
public final class StarBroadcast {
    private StarBroadcast() {
    }

    /**
     * Writes rank 0's {@code source} into {@code result} on every rank (the two may be one buffer;
     * only rank 0 reads its source).
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
        if (rank == 0) {
            for (int worker = 1; worker < worldSize; worker++) {
                call.receiveNotice(worker, MessageKind.STAR_BROADCAST_READY, 0);
            }
        } else {
            call.sendNotice(0, MessageKind.STAR_BROADCAST_READY, 0);
        }
        for (int partition = 0; partition < partitions; partition++) {
            int server = StarPartitions.server(partition, servers);
            int start = Math.toIntExact(StarPartitions.start(total, partitions, partition) * elementBytes);
            int length = Math.toIntExact(StarPartitions.start(total, partitions, partition + 1) * elementBytes) - start;
            if (rank == 0) {
                if (server == 0) {
                    for (int peer = 1; peer < worldSize; peer++) {
                        call.send(peer, MessageKind.STAR_BROADCAST, partition, source, start, length);
                    }
                } else {
                    call.send(server, MessageKind.STAR_BROADCAST, partition, source, start, length);
                }
            } else if (server == rank) {
                call.receiveCopy(0, MessageKind.STAR_BROADCAST, partition, result, start, length);
                for (int peer = 1; peer < worldSize; peer++) {
                    if (peer != rank) {
                        call.send(peer, MessageKind.STAR_BROADCAST, partition, result, start, length);
                    }
                }
            } else {
                call.receiveCopy(server, MessageKind.STAR_BROADCAST, partition, result, start, length);
            }
        }
        if (rank == 0) {
            call.copyWhole(source, result);
        }
    }
}
