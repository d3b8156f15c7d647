package io.ringstar.transport.aeron;

import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.HandshakeSide;
import io.ringstar.spi.handshake.Step;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * Handshake records ({@link HandshakeRecords}) over the rendezvous's blocking socket: whole
 * records out, whole records in, every read bounded by a deadline however the peer spreads its bytes.
 */
final class RecordSocket {

    /** One record read: its type and its body (little-endian). */
    record Received(byte type, ByteBuffer body) {
    }

    private RecordSocket() {
    }

    /**
     * Writes one whole record by {@code until} (System.nanoTime). A blocking socket's write has no
     * timeout of its own, and a peer that stops reading would hold it forever once the socket's send
     * buffer is full (a table is up to 1 MiB): so the record is written with the channel briefly
     * non-blocking, waiting for room at most until {@code until}.
     *
     * @throws SocketTimeoutException if the peer did not take the record in time
     */
    static void send(Socket socket, ByteBuffer record, long until) throws IOException {
        SocketChannel channel = socket.getChannel();
        ByteBuffer bytes = record.duplicate();
        channel.configureBlocking(false);
        try (Selector selector = Selector.open()) {
            channel.register(selector, SelectionKey.OP_WRITE);
            while (bytes.hasRemaining()) {
                if (channel.write(bytes) > 0) {
                    continue;
                }
                long left = TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime());
                if (left <= 0) {
                    throw new SocketTimeoutException("the peer did not take a handshake record in time");
                }
                selector.select(left);
            }
        } finally {
            // The selector is closed by now, so the channel is deregistered and may block again.
            channel.configureBlocking(true);
        }
    }

    /**
     * One turn of a handshake: reads the peer's next record by {@code until} (System.nanoTime),
     * hands it (or the garbage found in its place) to {@code side}, and sends the step's reply, if
     * any, before returning the step for the caller to act on.
     *
     * @throws IOException if the connection closed or the record did not arrive in time
     */
    static Step step(Socket socket, HandshakeSide side, long until) throws IOException {
        Step step;
        try {
            Received record = read(socket, side.recordLimit(), until);
            step = side.onRecord(record.type(), record.body());
        } catch (IllegalArgumentException e) {
            step = side.onGarbage(e.getMessage());
        }
        if (step.reply() != null) {
            send(socket, step.reply(), until);
        }
        return step;
    }

    /**
     * Reads one record by {@code until} (System.nanoTime).
     *
     * @throws IllegalArgumentException if its length prefix is out of bounds: the bytes are no records
     * @throws IOException if the connection closed or the record did not arrive in time
     */
    static Received read(Socket socket, int limit, long until) throws IOException {
        byte[] lengthBytes = new byte[HandshakeRecords.LENGTH_BYTES];
        readFully(socket, lengthBytes, until);
        int length = HandshakeRecords.checkLength(HandshakeRecords.order(ByteBuffer.wrap(lengthBytes)).getInt(), limit);
        byte[] record = new byte[length];
        readFully(socket, record, until);
        return new Received(record[0], HandshakeRecords.order(ByteBuffer.wrap(record, 1, length - 1).slice()));
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
}
