package io.ringstar.transport.aeron;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.spi.handshake.Acceptor;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import io.ringstar.spi.handshake.Step;
import io.ringstar.transport.aeron.Rendezvous.Endpoint;
import io.ringstar.transport.aeron.Rendezvous.Formed;
import io.ringstar.transport.aeron.Rendezvous.Table;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Rank 0's side of the {@link Rendezvous}: listens at the coordinator address ({@link #listen}),
 * runs the shared {@link Acceptor} on each registration in turn (one at a time, each bounded), and
 * once every rank has registered sends each of them the table, tagged for its connection, and
 * stops listening ({@link #coordinate}). Stateless between calls.
 */
final class Coordinator {
    /** Draws the table's nonce, from which every pair of ranks derives its Aeron session id. */
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(Rendezvous.class.getName());

    private Coordinator() {
    }

    /**
     * Rank 0: listens at {@code where} (the coordinator address; port 0 for any free one). Ranks that
     * connect before {@link #coordinate} wait in the backlog, each for its handshake's bound.
     *
     * @throws CollectiveException if it cannot
     */
    static ServerSocketChannel listen(InetSocketAddress where) {
        ServerSocketChannel listening = null;
        try {
            // A channel's socket, so that the accepted connections can go on as non-blocking sentinels.
            listening = ServerSocketChannel.open();
            ServerSocket server = listening.socket();
            server.setReuseAddress(true);
            server.bind(where, 128);
            return listening;
        } catch (IOException e) {
            if (listening != null) {
                try {
                    listening.close();
                } catch (IOException closing) {
                    e.addSuppressed(closing);
                }
            }
            throw new CollectiveException("rendezvous", 0, CollectiveException.NO_RANK, "cannot listen on " + where
                    + " (the coordinator address): " + e, e);
        }
    }

    /**
     * Rank 0: takes registrations on {@code listening} ({@link #listen}) until every other rank has
     * registered, then sends them the table; closes {@code listening} whatever happens. Connections
     * that fail the handshake are refused and do not disturb the others.
     *
     * @throws CollectiveTimeoutException naming the ranks that did not register before the deadline
     */
    static Formed coordinate(ServerSocketChannel listening, byte[] secret, Endpoint self, long deadline) {
        int worldSize = self.worldSize();
        Socket[] sockets = new Socket[worldSize];
        Acceptor[] handshakes = new Acceptor[worldSize];
        Endpoint[] endpoints = new Endpoint[worldSize];
        endpoints[0] = self;
        List<String> refusals = new ArrayList<>();
        InetSocketAddress where = (InetSocketAddress) listening.socket().getLocalSocketAddress();
        try (listening) {
            ServerSocket server = listening.socket();
            int registered = 1;
            while (registered < worldSize) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    List<Integer> missing = new ArrayList<>();
                    for (int r = 1; r < worldSize; r++) {
                        if (endpoints[r] == null) {
                            missing.add(r);
                        }
                    }
                    String reason = "ranks " + missing + " did not register with rank 0 at " + where + " in time"
                            + (refusals.isEmpty() ? "" : "; refused: " + refusals);
                    abandon(sockets, reason);
                    throw new CollectiveTimeoutException("rendezvous", 0, missing.get(0), reason);
                }
                server.setSoTimeout((int) Math.min(left, Integer.MAX_VALUE));
                Socket socket;
                try {
                    socket = server.accept();
                } catch (SocketTimeoutException e) {
                    continue;
                }
                try {
                    socket.setTcpNoDelay(true);
                    Acceptor handshake = new Acceptor(secret, self.identity(HandshakeRecords.PURPOSE_PEER,
                            CollectiveException.NO_RANK), peer -> admit(peer, endpoints));
                    Endpoint peer = accept(socket, handshake, deadline);
                    endpoints[peer.rank()] = peer;
                    sockets[peer.rank()] = socket;
                    handshakes[peer.rank()] = handshake;
                    registered++;
                    continue;
                } catch (IOException | RuntimeException e) {
                    refusals.add(socket.getRemoteSocketAddress() + ": " + e.getMessage());
                    LOG.log(System.Logger.Level.WARNING, "rank 0 refused a registration from {0}: {1}",
                            socket.getRemoteSocketAddress(), e.getMessage());
                }
                closeQuietly(socket);
            }
        } catch (IOException e) {
            abandon(sockets, "rank 0 failed: " + e);
            throw new CollectiveException("rendezvous", 0, CollectiveException.NO_RANK, "cannot take registrations"
                    + " on " + where + " (the coordinator address): " + e, e);
        }
        List<Identity> ranks = new ArrayList<>(worldSize);
        for (Endpoint endpoint : endpoints) {
            ranks.add(endpoint.identity(HandshakeRecords.PURPOSE_REGISTER, 0));
        }
        io.ringstar.spi.handshake.Table sent = new io.ringstar.spi.handshake.Table(RANDOM.nextInt(), ranks);
        SocketChannel[] connections = new SocketChannel[worldSize];
        for (int r = 1; r < worldSize; r++) {
            try {
                RecordSocket.send(sockets[r], handshakes[r].table(sent),
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Rendezvous.HANDSHAKE_MILLIS));
                connections[r] = sockets[r].getChannel();
            } catch (IOException e) {
                abandon(sockets, "rank " + r + " went away before the table was sent");
                throw new CollectiveException("rendezvous", 0, r, "could not send the table: " + e, e);
            }
        }
        return new Formed(new Table(sent.nonce(), List.of(endpoints)), connections);
    }

    /** Rank 0's part of admitting a registration whose proof and identity hold. */
    private static String admit(Identity peer, Endpoint[] known) {
        if (peer.purpose() != HandshakeRecords.PURPOSE_REGISTER) {
            return "rank 0 of an Aeron group takes registrations only (purpose " + peer.purpose() + ")";
        }
        if (known[peer.rank()] != null) {
            return "rank " + peer.rank() + " has already registered";
        }
        try {
            Endpoint.of(peer);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        return null;
    }

    /**
     * One registration's handshake, bounded by one limit however the peer spreads its bytes.
     *
     * @return the admitted peer's endpoint
     * @throws IOException saying why the connection was refused or dropped
     */
    private static Endpoint accept(Socket socket, Acceptor handshake, long deadline) throws IOException {
        long until = Math.min(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Rendezvous.HANDSHAKE_MILLIS), deadline);
        RecordSocket.send(socket, handshake.challenge(), until);
        while (true) {
            Step step = RecordSocket.step(socket, handshake, until);
            switch (step.outcome()) {
                case CONTINUE -> {
                }
                case ADMITTED -> {
                    return Endpoint.of(step.peer());
                }
                default -> throw new IOException(step.reason());
            }
        }
    }

    private static void abandon(Socket[] sockets, String reason) {
        for (Socket socket : sockets) {
            if (socket != null) {
                try {
                    // Best effort, and brief: the group is failing already.
                    RecordSocket.send(socket, HandshakeRecords.abandon(reason),
                            System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
                } catch (IOException e) {
                    // the rank is gone already; nothing to tell it
                }
                closeQuietly(socket);
            }
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing; nothing more to do
        }
    }
}
