package io.ringstar.transport.aeron;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Initiator;
import io.ringstar.spi.handshake.RefusedException;
import io.ringstar.spi.handshake.Step;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Forms the group over plain blocking TCP at the coordinator address before any Aeron stream
 * exists: rank 0 listens there, every other rank registers (retrying with back-off while rank 0 is
 * not up yet), and once all have registered rank 0 sends each of them the table of every rank's
 * Aeron endpoint and media-driver identity. Ranks may start in any order within the timeout. The
 * connections then stay open as the group's {@link Sentinels}.
 *
 * <p>The handshake on each connection is the one every network transport runs
 * ({@link io.ringstar.spi.handshake}: records, proofs and checks), driven here over a blocking
 * socket ({@link RecordSocket}). Rank 0's side is {@link Coordinator}; the other ranks' is here.
 * An endpoint travels as an identity whose details are the session base and the media driver's
 * id. Both sides prove the secret before either says anything about the job.
 */
final class Rendezvous {
    /** The most one connection's handshake may take before rank 0 drops it and serves the next. */
    static final long HANDSHAKE_MILLIS = 5_000;
    private static final long CONNECT_ATTEMPT_MILLIS = 5_000;
    private static final long LONGEST_BACKOFF_MILLIS = 1_000;

    private Rendezvous() {
    }

    /**
     * What one rank tells the others: who it is, where its Aeron stream endpoint is, the session ids
     * it takes there (rank p sends it UDP as session {@code sessionBase + p}), which driver it uses.
     */
    record Endpoint(String jobId, int worldSize, int rank, String host, int port, int sessionBase, String driverId) {
        /** This endpoint as the handshake carries it: the session base and driver id are its details. */
        Identity identity(byte purpose, int target) {
            ByteBuffer details = HandshakeRecords.order(ByteBuffer.allocate(6 + HandshakeRecords.MAX_STRING_BYTES));
            details.putInt(sessionBase);
            HandshakeRecords.writeString(details, driverId);
            byte[] bytes = new byte[details.position()];
            details.flip().get(bytes);
            return new Identity(purpose, jobId, worldSize, rank, target, host, port, bytes);
        }

        /** @throws IllegalArgumentException if the identity's details are not an Aeron endpoint's */
        static Endpoint of(Identity identity) {
            ByteBuffer details = HandshakeRecords.order(ByteBuffer.wrap(identity.details()));
            try {
                int sessionBase = details.getInt();
                String driverId = HandshakeRecords.readString(details);
                return new Endpoint(identity.jobId(), identity.worldSize(), identity.rank(), identity.host(),
                        identity.port(), sessionBase, driverId);
            } catch (BufferUnderflowException e) {
                throw new IllegalArgumentException("an identity without an Aeron endpoint's details", e);
            }
        }
    }

    /** The formed group: a nonce that makes this group's Aeron session ids its own, and every rank's endpoint. */
    record Table(int nonce, List<Endpoint> endpoints) {
    }

    /**
     * The table, and the rendezvous's connections, left open as {@link Sentinels}: rank 0's to
     * every rank (by rank), another rank's to rank 0 (element 0).
     */
    record Formed(Table table, SocketChannel[] connections) {
    }

    /**
     * Registers with rank 0 at {@code coordinator}, retrying with back-off while nobody listens
     * there, and waits for the table.
     *
     * @throws CollectiveTimeoutException if rank 0 was not reached or the table did not come before the deadline
     * @throws RefusedException if rank 0 refused this rank or abandoned the group, or what answers at
     *     {@code coordinator} is no rank 0 of this job (a wrong secret, malformed records)
     */
    static Formed register(InetSocketAddress coordinator, byte[] secret, Endpoint self, long deadline) {
        long backoff = 20;
        String lastProblem = "nobody answered";
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw new CollectiveTimeoutException("rendezvous", self.rank(), 0, "could not register with rank 0 at "
                        + coordinator + " in time: " + lastProblem);
            }
            SocketChannel channel = null;
            try {
                // A channel's socket, so that the connection can go on as a non-blocking sentinel.
                channel = SocketChannel.open();
                Socket socket = channel.socket();
                socket.setTcpNoDelay(true);
                socket.connect(coordinator, (int) Math.max(1, Math.min(left, CONNECT_ATTEMPT_MILLIS)));
                Table table = initiate(socket, coordinator, secret, self, deadline);
                SocketChannel[] connections = new SocketChannel[self.worldSize()];
                connections[0] = channel;
                channel = null;
                return new Formed(table, connections);
            } catch (SocketTimeoutException e) {
                lastProblem = "rank 0 did not answer (" + e.getMessage() + ")";
            } catch (IOException e) {
                lastProblem = e.toString();
            } finally {
                if (channel != null) {
                    try {
                        channel.close();
                    } catch (IOException e) {
                        // Nothing was set up on it.
                    }
                }
            }
            try {
                long remaining = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                Thread.sleep(Math.min(backoff, Math.max(1, remaining)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException("rendezvous", self.rank(), 0, "interrupted while registering", e);
            }
            backoff = Math.min(backoff * 2, LONGEST_BACKOFF_MILLIS);
        }
    }

    /**
     * The registration's handshake: up to the welcome within {@link #HANDSHAKE_MILLIS}; the table,
     * which comes once the last rank has registered, up to the rendezvous's own deadline.
     *
     * @throws IOException if the connection broke (a new attempt may work)
     */
    private static Table initiate(Socket socket, InetSocketAddress coordinator, byte[] secret, Endpoint self,
            long deadline) throws IOException {
        int rank = self.rank();
        Initiator handshake = new Initiator(secret, self.identity(HandshakeRecords.PURPOSE_REGISTER, 0), 0);
        long until = Math.min(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANDSHAKE_MILLIS), deadline);
        while (true) {
            Step step = RecordSocket.step(socket, handshake, handshake.welcomed() ? deadline : until);
            switch (step.outcome()) {
                case CONTINUE -> {
                }
                case DONE -> {
                    return table(step.table(), rank, coordinator);
                }
                case ABANDONED -> throw new RefusedException("rendezvous", rank, 0, "rank 0 abandoned the group: "
                        + step.reason());
                case BROKEN -> throw new IOException(step.reason());
                default -> throw new RefusedException("rendezvous", rank, 0, "rank 0 at " + coordinator + ": "
                        + step.reason());
            }
        }
    }

    private static Table table(io.ringstar.spi.handshake.Table received, int rank, InetSocketAddress coordinator) {
        List<Endpoint> endpoints = new ArrayList<>(received.ranks().size());
        try {
            for (Identity identity : received.ranks()) {
                endpoints.add(Endpoint.of(identity));
            }
        } catch (IllegalArgumentException e) {
            throw new RefusedException("rendezvous", rank, 0, "rank 0 at " + coordinator
                    + " sent a malformed handshake record: " + e.getMessage());
        }
        return new Table(received.nonce(), List.copyOf(endpoints));
    }
}
