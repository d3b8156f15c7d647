package io.ringstar.transport.aeron;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.spi.HandshakeProofs;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Forms the group over plain blocking TCP at the coordinator address before any Aeron stream
 * exists: rank 0 listens there, every other rank registers (retrying with back-off while rank 0 is
 * not up yet), and once all have registered rank 0 sends each of them the table of every rank's
 * Aeron endpoint and media-driver identity. Ranks may start in any order within the timeout. The
 * connections then stay open as the group's {@link Sentinels}.
 *
 * <p>Records are a little-endian {@code int32} length, a type byte and a body. The handshake carries
 * the same fields and shared-secret proofs as the Netty transport's:
 * <pre>
 *  rank 0 (acceptor)                             rank r (initiator)
 *     CHALLENGE magic, version, nonce A     --->
 *                                           <--- HELLO magic, version, secret?, nonce B, proof(A, B)
 *     PROOF proof(B, A)                     --->          (or REFUSE reason)
 *                                           <--- IDENTIFY identity, tag(A, B, identity)
 *     WELCOME identity, tag(B, A, identity) --->          (or REFUSE reason)
 *     TABLE nonce, endpoints, tag(A, B, ..) --->          (or ABANDON reason if the group never forms)
 * </pre>
 * Proofs and tags are HMAC-SHA256 over a label, both nonces and the record's bytes, zeros when the
 * job has no secret. Both sides prove the secret before either says anything about the job.
 */
final class Rendezvous {
    /** "RSTA" on the wire. */
    static final int MAGIC = 0x41545352;
    /** 2: each endpoint carries the base of the session ids its rank receives over UDP. */
    static final short VERSION = 2;
    static final int NONCE_BYTES = HandshakeProofs.NONCE_BYTES;
    static final int PROOF_BYTES = HandshakeProofs.PROOF_BYTES;
    // The same labels as the Netty transport's handshake, and a fifth for the table of endpoints.
    private static final byte[] HELLO_LABEL = HandshakeProofs.label("ringstar hello");
    private static final byte[] PROOF_LABEL = HandshakeProofs.label("ringstar proof");
    private static final byte[] IDENTIFY_LABEL = HandshakeProofs.label("ringstar identify");
    private static final byte[] WELCOME_LABEL = HandshakeProofs.label("ringstar welcome");
    private static final byte[] TABLE_LABEL = HandshakeProofs.label("ringstar table");
    /** Draws the table's nonce, from which every pair of ranks derives its Aeron session id. */
    private static final SecureRandom RANDOM = new SecureRandom();

    static final byte CHALLENGE = 1;
    static final byte HELLO = 2;
    static final byte PROOF = 3;
    static final byte IDENTIFY = 4;
    static final byte WELCOME = 5;
    static final byte TABLE = 6;
    static final byte REFUSE = 7;
    static final byte ABANDON = 8;

    /** The longest record read before the peer has proved anything. */
    private static final int MAX_UNTRUSTED_RECORD = 4096;
    private static final int MAX_RECORD = 1 << 20;
    private static final int MAX_STRING_BYTES = 1024;
    /** The most one connection's handshake may take before rank 0 drops it and serves the next. */
    private static final long HANDSHAKE_MILLIS = 10_000;
    private static final long CONNECT_ATTEMPT_MILLIS = 5_000;
    private static final long LONGEST_BACKOFF_MILLIS = 1_000;
    private static final System.Logger LOG = System.getLogger(Rendezvous.class.getName());

    private Rendezvous() {
    }

    /**
     * What one rank tells the others: who it is, where its Aeron stream endpoint is, the session ids
     * it takes there (rank p sends it UDP as session {@code sessionBase + p}), which driver it uses.
     */
    record Endpoint(String jobId, int worldSize, int rank, String host, int port, int sessionBase, String driverId) {
        void write(ByteBuffer out) {
            out.putInt(worldSize).putInt(rank).putInt(port).putInt(sessionBase);
            putString(out, jobId);
            putString(out, host);
            putString(out, driverId);
        }

        static Endpoint read(ByteBuffer in) {
            int worldSize = in.getInt();
            int rank = in.getInt();
            int port = in.getInt();
            int sessionBase = in.getInt();
            return new Endpoint(getString(in), worldSize, rank, getString(in), port, sessionBase, getString(in));
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

    /** A peer refused this rank, or rank 0 gave up on the group. */
    static final class RefusedException extends CollectiveException {
        RefusedException(int rank, String detail) {
            super("rendezvous", rank, 0, detail);
        }
    }

    // ---- rank 0 ----

    /**
     * Rank 0: listens at the coordinator address until every other rank has registered, then sends
     * them the table. Connections that fail the handshake are refused and do not disturb the others.
     *
     * @throws CollectiveTimeoutException naming the ranks that did not register before the deadline
     */
    static Formed coordinate(InetSocketAddress where, byte[] secret, Endpoint self, long deadline) {
        int worldSize = self.worldSize();
        Socket[] sockets = new Socket[worldSize];
        byte[][][] nonces = new byte[worldSize][][];
        Endpoint[] endpoints = new Endpoint[worldSize];
        endpoints[0] = self;
        List<String> refusals = new ArrayList<>();
        // A channel's socket, so that the accepted connections can go on as non-blocking sentinels.
        try (ServerSocketChannel listening = ServerSocketChannel.open()) {
            ServerSocket server = listening.socket();
            server.setReuseAddress(true);
            server.bind(where, 128);
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
                    socket.setSoTimeout((int) Math.max(1, Math.min(HANDSHAKE_MILLIS, left)));
                    socket.setTcpNoDelay(true);
                    byte[][] pair = new byte[2][];
                    Endpoint peer = accept(socket, secret, self, endpoints, pair, deadline);
                    if (peer != null) {
                        endpoints[peer.rank()] = peer;
                        sockets[peer.rank()] = socket;
                        nonces[peer.rank()] = pair;
                        registered++;
                        continue;
                    }
                } catch (IOException | RuntimeException e) {
                    refusals.add(socket.getRemoteSocketAddress() + ": " + e.getMessage());
                    LOG.log(System.Logger.Level.WARNING, "rank 0 dropped a registration from {0}: {1}",
                            socket.getRemoteSocketAddress(), e.toString());
                }
                closeQuietly(socket);
            }
        } catch (IOException e) {
            abandon(sockets, "rank 0 failed: " + e);
            throw new CollectiveException("rendezvous", 0, CollectiveException.NO_RANK, "cannot listen on " + where
                    + " (the coordinator address): " + e, e);
        }
        Table table = new Table(RANDOM.nextInt(), List.of(endpoints));
        byte[] tableBytes = tableBytes(table);
        SocketChannel[] connections = new SocketChannel[worldSize];
        for (int r = 1; r < worldSize; r++) {
            try {
                ByteBuffer out = begin(TABLE, tableBytes.length + PROOF_BYTES);
                out.put(tableBytes).put(HandshakeProofs.mac(secret, TABLE_LABEL, nonces[r][0], nonces[r][1], tableBytes));
                send(sockets[r], out);
                connections[r] = sockets[r].getChannel();
            } catch (IOException e) {
                abandon(sockets, "rank " + r + " went away before the table was sent");
                throw new CollectiveException("rendezvous", 0, r, "could not send the table: " + e, e);
            }
        }
        return new Formed(table, connections);
    }

    /** One registration's handshake; returns the peer, or null after refusing it. */
    private static Endpoint accept(Socket socket, byte[] secret, Endpoint self, Endpoint[] known, byte[][] nonces,
            long deadline) throws IOException {
        // One limit for the whole handshake, however the peer spreads its bytes.
        long until = Math.min(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANDSHAKE_MILLIS), deadline);
        byte[] nonceA = HandshakeProofs.newNonce();
        send(socket, begin(CHALLENGE, 6 + NONCE_BYTES).putInt(MAGIC).putShort(VERSION).put(nonceA));
        ByteBuffer hello = expect(socket, HELLO, MAX_UNTRUSTED_RECORD, until, 0);
        if (hello.getInt() != MAGIC) {
            throw new IOException("not a ringstar Aeron rank (bad magic)");
        }
        short version = hello.getShort();
        boolean peerHasSecret = hello.get() != 0;
        byte[] nonceB = bytes(hello, NONCE_BYTES);
        byte[] proof = bytes(hello, PROOF_BYTES);
        if (version != VERSION) {
            return refuse(socket, "protocol version " + version + ", rank 0 speaks " + VERSION);
        }
        if (peerHasSecret != (secret != null)) {
            return refuse(socket, secret != null ? "the job requires a shared secret" : "the job has no shared secret");
        }
        if (!HandshakeProofs.holds(proof, secret, HELLO_LABEL, nonceA, nonceB)) {
            return refuse(socket, "wrong shared secret");
        }
        send(socket, begin(PROOF, PROOF_BYTES).put(HandshakeProofs.mac(secret, PROOF_LABEL, nonceB, nonceA)));
        ByteBuffer identify = expect(socket, IDENTIFY, MAX_UNTRUSTED_RECORD, until, 0);
        Endpoint peer = readTagged(identify, secret, IDENTIFY_LABEL, nonceA, nonceB);
        if (peer == null) {
            return refuse(socket, "bad identity tag");
        }
        String mismatch = !peer.jobId().equals(self.jobId()) ? "job '" + peer.jobId() + "', rank 0 runs '" + self.jobId() + "'"
                : peer.worldSize() != self.worldSize() ? "world size " + peer.worldSize() + ", rank 0 has " + self.worldSize()
                : peer.rank() < 1 || peer.rank() >= self.worldSize() ? "rank " + peer.rank() + " is out of range"
                : known[peer.rank()] != null ? "rank " + peer.rank() + " has already registered" : null;
        if (mismatch != null) {
            return refuse(socket, mismatch);
        }
        send(socket, tagged(WELCOME, secret, WELCOME_LABEL, nonceB, nonceA, self));
        nonces[0] = nonceA;
        nonces[1] = nonceB;
        return peer;
    }

    private static Endpoint refuse(Socket socket, String reason) throws IOException {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        send(socket, begin(REFUSE, 2 + text.length).putShort((short) text.length).put(text));
        LOG.log(System.Logger.Level.WARNING, "rank 0 refused a registration from {0}: {1}",
                socket.getRemoteSocketAddress(), reason);
        return null;
    }

    private static void abandon(Socket[] sockets, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        for (Socket socket : sockets) {
            if (socket != null) {
                try {
                    send(socket, begin(ABANDON, 2 + Math.min(text.length, MAX_STRING_BYTES))
                            .putShort((short) Math.min(text.length, MAX_STRING_BYTES))
                            .put(text, 0, Math.min(text.length, MAX_STRING_BYTES)));
                } catch (IOException e) {
                    // the rank is gone already; nothing to tell it
                }
                closeQuietly(socket);
            }
        }
    }

    // ---- other ranks ----

    /**
     * Registers with rank 0 at {@code coordinator}, retrying with back-off while nobody listens
     * there, and waits for the table.
     *
     * @throws CollectiveTimeoutException if rank 0 was not reached or the table did not come before the deadline
     * @throws RefusedException if rank 0 refused this rank or abandoned the group
     * @throws CollectiveException if what answers at {@code coordinator} sends a malformed record
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
                socket.setSoTimeout((int) Math.max(1, Math.min(left, HANDSHAKE_MILLIS)));
                Table table = initiate(socket, secret, self, deadline);
                SocketChannel[] connections = new SocketChannel[self.worldSize()];
                connections[0] = channel;
                channel = null;
                return new Formed(table, connections);
            } catch (IllegalArgumentException | BufferUnderflowException e) {
                // A record that parses wrong is no network hiccup a retry would cure: whoever answers at
                // the coordinator address does not speak this protocol (or is broken).
                throw new CollectiveException("rendezvous", self.rank(), 0, "rank 0 at " + coordinator
                        + " sent a malformed handshake record: " + e, e);
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
                Thread.sleep(Math.min(backoff, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CollectiveException("rendezvous", self.rank(), 0, "interrupted while registering", e);
            }
            backoff = Math.min(backoff * 2, LONGEST_BACKOFF_MILLIS);
        }
    }

    private static Table initiate(Socket socket, byte[] secret, Endpoint self, long deadline) throws IOException {
        int rank = self.rank();
        long until = Math.min(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANDSHAKE_MILLIS), deadline);
        ByteBuffer challenge = expect(socket, CHALLENGE, MAX_UNTRUSTED_RECORD, until, rank);
        if (challenge.getInt() != MAGIC) {
            throw new RefusedException(self.rank(), "the coordinator address is not a ringstar Aeron rank 0");
        }
        short version = challenge.getShort();
        if (version != VERSION) {
            throw new RefusedException(self.rank(), "rank 0 speaks protocol version " + version + ", this rank " + VERSION);
        }
        byte[] nonceA = bytes(challenge, NONCE_BYTES);
        byte[] nonceB = HandshakeProofs.newNonce();
        send(socket, begin(HELLO, 7 + NONCE_BYTES + PROOF_BYTES).putInt(MAGIC).putShort(VERSION)
                .put((byte) (secret != null ? 1 : 0)).put(nonceB)
                .put(HandshakeProofs.mac(secret, HELLO_LABEL, nonceA, nonceB)));
        ByteBuffer proof = expect(socket, PROOF, MAX_UNTRUSTED_RECORD, until, rank);
        if (!HandshakeProofs.holds(bytes(proof, PROOF_BYTES), secret, PROOF_LABEL, nonceB, nonceA)) {
            throw new RefusedException(self.rank(), "rank 0 does not know the shared secret");
        }
        send(socket, tagged(IDENTIFY, secret, IDENTIFY_LABEL, nonceA, nonceB, self));
        Endpoint root = readTagged(expect(socket, WELCOME, MAX_RECORD, until, rank), secret, WELCOME_LABEL, nonceB,
                nonceA);
        if (root == null || root.rank() != 0 || !root.jobId().equals(self.jobId())
                || root.worldSize() != self.worldSize()) {
            throw new RefusedException(self.rank(), "rank 0's welcome does not match this job: " + root);
        }
        // Everyone waits here until the last rank registers: up to the rendezvous's own deadline.
        ByteBuffer body = expect(socket, TABLE, MAX_RECORD, deadline, rank);
        byte[] tableBytes = bytes(body, body.remaining() - PROOF_BYTES);
        if (!HandshakeProofs.holds(bytes(body, PROOF_BYTES), secret, TABLE_LABEL, nonceA, nonceB, tableBytes)) {
            throw new RefusedException(self.rank(), "the table's tag does not hold");
        }
        ByteBuffer table = ByteBuffer.wrap(tableBytes).order(ByteOrder.LITTLE_ENDIAN);
        int nonce = table.getInt();
        int count = table.getInt();
        if (count != self.worldSize()) {
            throw new RefusedException(self.rank(), "a table of " + count + " ranks for a world of " + self.worldSize());
        }
        List<Endpoint> endpoints = new ArrayList<>(count);
        for (int r = 0; r < count; r++) {
            endpoints.add(Endpoint.read(table));
        }
        return new Table(nonce, List.copyOf(endpoints));
    }

    // ---- records ----

    private static byte[] tableBytes(Table table) {
        ByteBuffer out = ByteBuffer.allocate(MAX_RECORD).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(table.nonce()).putInt(table.endpoints().size());
        table.endpoints().forEach(endpoint -> endpoint.write(out));
        return Arrays.copyOf(out.array(), out.position());
    }

    private static ByteBuffer tagged(byte type, byte[] secret, byte[] label, byte[] first, byte[] second, Endpoint who) {
        ByteBuffer body = ByteBuffer.allocate(4 * MAX_STRING_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        who.write(body);
        byte[] bytes = Arrays.copyOf(body.array(), body.position());
        return begin(type, bytes.length + PROOF_BYTES).put(bytes).put(HandshakeProofs.mac(secret, label, first, second, bytes));
    }

    /** The endpoint in a tagged record, or null if its tag does not hold. */
    private static Endpoint readTagged(ByteBuffer body, byte[] secret, byte[] label, byte[] first, byte[] second) {
        int start = body.position();
        Endpoint endpoint = Endpoint.read(body);
        byte[] bytes = new byte[body.position() - start];
        body.duplicate().position(start).get(bytes);
        return HandshakeProofs.holds(bytes(body, PROOF_BYTES), secret, label, first, second, bytes) ? endpoint : null;
    }

    private static ByteBuffer begin(byte type, int bodyLength) {
        ByteBuffer out = ByteBuffer.allocate(5 + bodyLength).order(ByteOrder.LITTLE_ENDIAN);
        return out.putInt(1 + bodyLength).put(type);
    }

    private static void send(Socket socket, ByteBuffer record) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(record.array(), 0, record.position());
        out.flush();
    }

    /**
     * Reads one record of {@code type} by {@code until} (System.nanoTime); a REFUSE or ABANDON
     * instead becomes a {@link RefusedException} for {@code rank}.
     */
    private static ByteBuffer expect(Socket socket, byte type, int maxLength, long until, int rank) throws IOException {
        byte[] lengthBytes = new byte[4];
        readFully(socket, lengthBytes, until);
        int length = ByteBuffer.wrap(lengthBytes).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (length < 1 || length > maxLength) {
            throw new IOException("a record of " + length + " bytes");
        }
        byte[] record = new byte[length];
        readFully(socket, record, until);
        ByteBuffer body = ByteBuffer.wrap(record, 1, length - 1).slice().order(ByteOrder.LITTLE_ENDIAN);
        if (record[0] == REFUSE || record[0] == ABANDON) {
            String reason = getString(body);
            throw new RefusedException(rank,
                    (record[0] == REFUSE ? "rank 0 refused this rank: " : "rank 0 abandoned the group: ") + reason);
        }
        if (record[0] != type) {
            throw new IOException("expected record " + type + ", got " + record[0]);
        }
        return body;
    }

    /**
     * Fills {@code into}, each read bounded by what is left until {@code until}: the socket's own
     * timeout applies to one read, so a peer that sends a byte now and then could otherwise hold
     * the rendezvous far past its deadline.
     */
    private static void readFully(Socket socket, byte[] into, long until) throws IOException {
        InputStream in = socket.getInputStream();
        int done = 0;
        while (done < into.length) {
            long left = TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime());
            if (left <= 0) {
                throw new SocketTimeoutException("the handshake record did not arrive in time");
            }
            socket.setSoTimeout((int) Math.min(left, Integer.MAX_VALUE));
            int n = in.read(into, done, into.length - done);
            if (n < 0) {
                throw new EOFException("the connection closed in the middle of a handshake record");
            }
            done += n;
        }
    }

    private static byte[] bytes(ByteBuffer in, int count) {
        if (count < 0 || count > in.remaining()) {
            throw new IllegalArgumentException("a record cut short");
        }
        byte[] out = new byte[count];
        in.get(out);
        return out;
    }

    private static void putString(ByteBuffer out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a string of " + bytes.length + " bytes, more than " + MAX_STRING_BYTES);
        }
        out.putShort((short) bytes.length).put(bytes);
    }

    private static String getString(ByteBuffer in) {
        int length = Short.toUnsignedInt(in.getShort());
        if (length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a string of " + length + " bytes");
        }
        return new String(bytes(in, length), StandardCharsets.UTF_8);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing; nothing more to do
        }
    }
}
