package io.ringstar.transport.netty;

import io.ringstar.spi.HandshakeProofs;
import io.ringstar.spi.handshake.HandshakeRecords;
import io.ringstar.spi.handshake.Identity;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * A hand-driven peer on a plain socket that speaks the handshake itself, so a test can join a
 * group as a real registered rank and then misbehave in ways a {@link NettyTransport} never would.
 */
final class FakeRank implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    FakeRank(String host, int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress(host, port), 5000);
        socket.setSoTimeout(20_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    /** One handshake record: its type, then its body (little-endian). */
    record Record(byte type, ByteBuffer body) {
    }

    Record read() throws IOException {
        int length = Integer.reverseBytes(in.readInt());
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return new Record(bytes[0], HandshakeRecords.order(ByteBuffer.wrap(bytes, 1, length - 1).slice()));
    }

    void write(ByteBuffer buffer) throws IOException {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        write(bytes);
    }

    void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /**
     * Runs the initiator's side of the handshake as {@code identity} (with {@code secret}, or none)
     * and returns the acceptor's last reply: WELCOME, or REFUSE with its reason.
     */
    Record hello(byte[] secret, Identity identity) throws IOException {
        Record challenge = read();
        if (challenge.type() != HandshakeRecords.CHALLENGE) {
            throw new IOException("expected a challenge, got record type " + challenge.type());
        }
        ByteBuffer body = challenge.body();
        body.position(4 + 2);
        byte[] challengeNonce = HandshakeRecords.bytes(body, HandshakeRecords.NONCE_BYTES);
        byte[] helloNonce = HandshakeProofs.newNonce();
        write(HandshakeRecords.hello(secret, challengeNonce, helloNonce));
        Record proof = read();
        if (proof.type() != HandshakeRecords.PROOF) {
            return proof;
        }
        write(HandshakeRecords.identity(HandshakeRecords.IDENTIFY, secret, challengeNonce, helloNonce, identity));
        return read();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
