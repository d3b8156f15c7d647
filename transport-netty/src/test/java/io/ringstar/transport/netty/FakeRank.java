package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.ringstar.spi.HandshakeProofs;
import io.ringstar.transport.netty.Handshake.Identity;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;

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

    /** One handshake record: its type, then its body. */
    record Record(byte type, ByteBuf body) {
    }

    Record read() throws IOException {
        int length = Integer.reverseBytes(in.readInt());
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        ByteBuf record = Unpooled.wrappedBuffer(bytes);
        return new Record(record.readByte(), record);
    }

    void write(ByteBuf buffer) throws IOException {
        byte[] bytes = new byte[buffer.readableBytes()];
        buffer.readBytes(bytes);
        buffer.release();
        out.write(bytes);
        out.flush();
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
        if (challenge.type() != Handshake.CHALLENGE) {
            throw new IOException("expected a challenge, got record type " + challenge.type());
        }
        ByteBuf body = challenge.body();
        body.skipBytes(4 + 2);
        byte[] challengeNonce = new byte[Handshake.NONCE_BYTES];
        body.readBytes(challengeNonce);
        byte[] helloNonce = HandshakeProofs.newNonce();
        write(Handshake.hello(ByteBufAllocator.DEFAULT, secret, challengeNonce, helloNonce));
        Record proof = read();
        if (proof.type() != Handshake.PROOF) {
            return proof;
        }
        write(Handshake.identity(ByteBufAllocator.DEFAULT, Handshake.IDENTIFY, secret, challengeNonce, helloNonce,
                identity));
        return read();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
