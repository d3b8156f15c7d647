package io.ringstar.transport.aeron;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * The rendezvous's TCP connections, kept open for as long as the group lives, to tell a dead
 * process from a paused one. The operating system closes a killed process's sockets at once, so
 * the end of a sentinel connection means its rank died; a stopped process (SIGSTOP, a long garbage
 * collection) keeps them open and is not mistaken for dead, so the Aeron streams can use a liveness
 * timeout as long as the collective timeout and still learn of a death in milliseconds.
 *
 * <p>The connections form a star: every rank holds one to rank 0, and rank 0 one to every rank.
 * Rank 0 sees any rank die and tells the others ({@link #DEAD}); every rank sees rank 0 die. A rank
 * that closes its transport says {@link #BYE} first, so its closing is not taken for a death.
 * Records are the rendezvous's: a little-endian {@code int32} length, a type byte and a body.
 *
 * <p>Non-blocking; used by the transport's I/O lock holder only.
 */
final class Sentinels implements AutoCloseable {
    /** Rank 0 to the others: a rank died (body: its rank, an int32). */
    static final byte DEAD = 9;
    /** The sender closes its transport: the end of this connection that follows is no death. */
    static final byte BYE = 10;

    /** What the transport does when a rank is found dead. */
    interface Listener {
        void onDeath(int deadRank, String why);
    }

    private final int rank;
    /** By rank: rank 0 holds one per other rank; the others only element 0. Null where none. */
    private final SocketChannel[] sockets;
    private final ByteBuffer[] pending;
    private final boolean[] saidBye;
    private final boolean[] ended;

    Sentinels(int rank, SocketChannel[] sockets) throws IOException {
        this.rank = rank;
        this.sockets = sockets;
        this.pending = new ByteBuffer[sockets.length];
        this.saidBye = new boolean[sockets.length];
        this.ended = new boolean[sockets.length];
        for (int r = 0; r < sockets.length; r++) {
            if (sockets[r] != null) {
                sockets[r].configureBlocking(false);
                pending[r] = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
            }
        }
    }

    /** Reads every connection; reports each rank found dead once, and rank 0 tells the others. */
    void check(Listener listener) {
        for (int r = 0; r < sockets.length; r++) {
            if (sockets[r] == null || ended[r]) {
                continue;
            }
            int n;
            try {
                n = sockets[r].read(pending[r]);
            } catch (IOException e) {
                n = -1;
            }
            if (n < 0) {
                ended[r] = true;
                if (!saidBye[r]) {
                    String why = rank == 0
                            ? "rank " + r + "'s process died (its connection to rank 0 closed without a goodbye)"
                            : "rank 0's process died (its connection to this rank closed without a goodbye)";
                    listener.onDeath(r, why);
                    if (rank == 0) {
                        tellOthers(r);
                    }
                }
                continue;
            }
            readRecords(r, listener);
        }
    }

    private void readRecords(int from, Listener listener) {
        ByteBuffer in = pending[from];
        in.flip();
        while (in.remaining() >= 5) {
            int length = in.getInt(in.position());
            if (length < 1 || length > in.capacity() - 4) {
                // Not a record of ours: the connection is no use as a sentinel any more.
                ended[from] = true;
                in.clear();
                return;
            }
            if (in.remaining() < 4 + length) {
                break;
            }
            byte type = in.get(in.position() + 4);
            if (type == BYE) {
                saidBye[from] = true;
            } else if (type == DEAD && length == 5 && rank != 0) {
                int dead = in.getInt(in.position() + 5);
                listener.onDeath(dead, "rank " + dead + "'s process died (rank 0 saw its connection close without a"
                        + " goodbye)");
            }
            in.position(in.position() + 4 + length);
        }
        in.compact();
    }

    /** Rank 0: tells every other rank that {@code dead} died. */
    private void tellOthers(int dead) {
        ByteBuffer record = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(5).put(DEAD).putInt(dead).flip();
        for (int r = 1; r < sockets.length; r++) {
            if (r != dead && sockets[r] != null && !ended[r]) {
                // A whole record for each rank, whatever reached the one before.
                write(r, record.rewind());
            }
        }
    }

    /** Says goodbye on every connection (best effort: what does not fit the socket now is dropped). */
    void sayBye() {
        ByteBuffer record = ByteBuffer.allocate(5).order(ByteOrder.LITTLE_ENDIAN).putInt(1).put(BYE).flip();
        for (int r = 0; r < sockets.length; r++) {
            if (sockets[r] != null && !ended[r]) {
                write(r, record.rewind());
            }
        }
    }

    private void write(int to, ByteBuffer record) {
        try {
            sockets[to].write(record);
        } catch (IOException e) {
            // That rank is gone already; its own end tells the rest.
        }
    }

    @Override
    public void close() {
        for (SocketChannel socket : sockets) {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException e) {
                    // Closing only fails for a socket already gone.
                }
            }
        }
    }
}
