package io.ringstar.transport.netty;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * TLS over a taken-over socket, continuing the session Netty's handler established: decrypts
 * what the socket delivers into the caller's buffer, and encrypts the caller's buffers into
 * records it writes to the socket. Non-blocking both ways; used by one {@link SocketLink} under the
 * transport's I/O lock. Handles what a session may still need after its handshake (TLS 1.3's
 * session tickets and key updates) in passing.
 */
final class TlsCodec {
    private final SSLEngine engine;
    /** Ciphertext read and not yet decrypted; kept in write mode. */
    private ByteBuffer netIn;
    /** Ciphertext made and not yet written; kept in write mode. */
    private ByteBuffer netOut;
    private static final ByteBuffer[] NOTHING = {ByteBuffer.allocate(0)};

    /** @param leftover ciphertext that came before the take-over and was not decrypted yet */
    TlsCodec(SSLEngine engine, ByteBuffer leftover) {
        this.engine = engine;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocateDirect(Math.max(4 * packet, leftover.remaining() + packet));
        this.netOut = ByteBuffer.allocateDirect(4 * packet);
        netIn.put(leftover);
    }

    /** The room a read must offer at least: one record's plaintext. */
    int minimumReadSpace() {
        return engine.getSession().getApplicationBufferSize();
    }

    /**
     * Decrypts into {@code dst} what the socket has for it, reading the socket as needed.
     *
     * @return plaintext bytes put into {@code dst}, 0 if none are there yet, -1 once the stream
     *     has ended and nothing more will come
     */
    int read(SocketChannel socket, ByteBuffer dst) throws IOException {
        int produced = 0;
        boolean readSocket = netIn.position() == 0;
        while (true) {
            if (readSocket) {
                int n = socket.read(netIn);
                if (n < 0) {
                    return produced > 0 ? produced : -1;
                }
                if (n == 0) {
                    return produced;
                }
            }
            netIn.flip();
            SSLEngineResult result;
            try {
                result = engine.unwrap(netIn, dst);
            } finally {
                netIn.compact();
            }
            produced += result.bytesProduced();
            runTasks(result);
            if (result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                // The peer asked for something back (a key update): queue it; writes send it.
                wrap(NOTHING, 0);
                flush(socket);
            }
            switch (result.getStatus()) {
                case OK -> readSocket = result.bytesConsumed() == 0;
                case BUFFER_UNDERFLOW -> {
                    if (netIn.remaining() == 0) {
                        netIn = grow(netIn);
                    }
                    readSocket = true;
                }
                case BUFFER_OVERFLOW -> {
                    return produced;
                }
                case CLOSED -> {
                    return produced > 0 ? produced : -1;
                }
                default -> throw new SSLException("unexpected TLS status " + result.getStatus());
            }
            if (!dst.hasRemaining()) {
                return produced;
            }
        }
    }

    /**
     * Encrypts as much of {@code sources[0..count)} as the socket takes now, together with what
     * earlier calls left unwritten.
     *
     * @return plaintext bytes taken from the sources (they are sent, or queued here to be sent)
     */
    long write(SocketChannel socket, ByteBuffer[] sources, int count) throws IOException {
        if (!flush(socket)) {
            return 0;
        }
        long taken = 0;
        while (remaining(sources, count) > 0) {
            SSLEngineResult result = wrap(sources, count);
            taken += result.bytesConsumed();
            if (!flush(socket) || result.bytesConsumed() == 0) {
                break;
            }
        }
        return taken;
    }

    /** True while received ciphertext waits to be decrypted. */
    boolean hasBufferedInput() {
        return netIn.position() > 0;
    }

    /** True while encrypted bytes wait to be written. */
    boolean hasPending() {
        return netOut.position() > 0;
    }

    /** Writes what waits; true if nothing is left. */
    boolean flush(SocketChannel socket) throws IOException {
        if (netOut.position() == 0) {
            return true;
        }
        netOut.flip();
        try {
            socket.write(netOut);
        } finally {
            netOut.compact();
        }
        return netOut.position() == 0;
    }

    private SSLEngineResult wrap(ByteBuffer[] sources, int count) throws IOException {
        while (true) {
            SSLEngineResult result = engine.wrap(sources, 0, count, netOut);
            runTasks(result);
            switch (result.getStatus()) {
                case OK -> {
                    return result;
                }
                case BUFFER_OVERFLOW -> {
                    if (netOut.position() > 0) {
                        return result;
                    }
                    netOut = grow(netOut);
                }
                case CLOSED -> throw new SSLException("the TLS session is closed");
                default -> throw new SSLException("unexpected TLS status " + result.getStatus());
            }
        }
    }

    private void runTasks(SSLEngineResult result) {
        if (result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
            Runnable task;
            while ((task = engine.getDelegatedTask()) != null) {
                task.run();
            }
        }
    }

    private static long remaining(ByteBuffer[] sources, int count) {
        long total = 0;
        for (int i = 0; i < count; i++) {
            total += sources[i].remaining();
        }
        return total;
    }

    private static ByteBuffer grow(ByteBuffer buffer) {
        ByteBuffer grown = ByteBuffer.allocateDirect(buffer.capacity() * 2);
        buffer.flip();
        grown.put(buffer);
        return grown;
    }
}
