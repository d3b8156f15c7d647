package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.ringstar.spi.HandshakeProofs;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The records two ranks exchange before their connection carries frames, and the shared-secret
 * proofs in them. Every record is a little-endian {@code int32} length, a type byte and a body.
 *
 * <pre>
 *  acceptor                                      initiator
 *     CHALLENGE magic, version, nonce A     --->
 *                                           <--- HELLO magic, version, secret?, nonce B, proof(A, B)
 *     PROOF proof(B, A)                     --->          (or REFUSE reason)
 *                                           <--- IDENTIFY identity, tag(A, B, identity)
 *     WELCOME identity, tag(B, A, identity) --->          (or REFUSE reason)
 *     TABLE addresses of all ranks          --->          (registrations with rank 0 only;
 *                                                         ABANDON reason if the group never forms)
 * </pre>
 *
 * With TLS ({@link TlsContexts}), the acceptor first sends a plain TLS record (magic, version);
 * the initiator then starts TLS, and every record above, and every frame after them, goes inside
 * it. An initiator without TLS that gets this record, or one with TLS that gets a CHALLENGE in
 * plain text, stops with an error that says the two ranks' TLS settings differ.
 *
 * <p>Both sides prove that they know the secret before either says anything about the job, so a
 * peer without the secret, on either end of a connection, learns only that a ringstar rank of some
 * protocol version is there. Proofs and tags are HMAC-SHA256 over a label per record, both nonces
 * and (for tags) the identity's bytes: they cannot be replayed on another connection, moved to
 * another identity or swapped between the two directions. Without a secret the proofs are zeros
 * and the same records flow. Without TLS the frames that follow the handshake are not
 * authenticated: the secret keeps strangers out of the group, it does not protect the bytes on the
 * wire; TLS does (encryption and integrity, the same for every record and frame).
 */
final class Handshake {
    /** "RSTN" on the wire. */
    static final int MAGIC = 0x4E545352;
    static final short VERSION = 1;
    static final int NONCE_BYTES = HandshakeProofs.NONCE_BYTES;
    static final int PROOF_BYTES = HandshakeProofs.PROOF_BYTES;

    static final byte CHALLENGE = 1;
    static final byte HELLO = 2;
    static final byte WELCOME = 3;
    static final byte REFUSE = 4;
    static final byte TABLE = 5;
    static final byte PROOF = 6;
    static final byte IDENTIFY = 7;
    static final byte ABANDON = 8;
    /** Sent in plain text, first, by an acceptor that speaks TLS: the initiator starts TLS, or learns why it cannot. */
    static final byte TLS = 9;

    /** The longest record an acceptor reads from a connection that has not proved anything yet. */
    static final int MAX_UNTRUSTED_RECORD = 4096;
    /** The longest record at all (a table of many ranks). */
    static final int MAX_RECORD = 1 << 20;

    static final byte PURPOSE_REGISTER = 1;
    static final byte PURPOSE_PEER = 2;

    private static final int MAX_STRING_BYTES = 1024;
    static final byte[] HELLO_LABEL = HandshakeProofs.label("ringstar hello");
    static final byte[] PROOF_LABEL = HandshakeProofs.label("ringstar proof");
    static final byte[] IDENTIFY_LABEL = HandshakeProofs.label("ringstar identify");
    static final byte[] WELCOME_LABEL = HandshakeProofs.label("ringstar welcome");

    private Handshake() {
    }

    /**
     * Who a rank says it is: the job, the group's size, its rank, where it listens, and the rank it
     * means to reach (so a connection cannot be relayed to another rank than the one intended).
     */
    record Identity(byte purpose, String jobId, int worldSize, int rank, String listenHost, int listenPort,
            int targetRank) {
        void write(ByteBuf out) {
            out.writeByte(purpose);
            out.writeIntLE(worldSize);
            out.writeIntLE(rank);
            out.writeIntLE(targetRank);
            writeString(out, jobId);
            writeString(out, listenHost);
            out.writeIntLE(listenPort);
        }

        static Identity read(ByteBuf in) {
            byte purpose = in.readByte();
            int worldSize = in.readIntLE();
            int rank = in.readIntLE();
            int target = in.readIntLE();
            String jobId = readString(in);
            String host = readString(in);
            int port = in.readIntLE();
            return new Identity(purpose, jobId, worldSize, rank, host, port, target);
        }

        Identity aimedAt(int target) {
            return new Identity(purpose, jobId, worldSize, rank, listenHost, listenPort, target);
        }
    }

    /** One rank's listening address, as rank 0 tells it to the others. */
    record Address(String host, int port) {
        @Override
        public String toString() {
            return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
        }
    }

    static ByteBuf tls(ByteBufAllocator alloc) {
        ByteBuf out = begin(alloc, TLS);
        out.writeIntLE(MAGIC);
        out.writeShortLE(VERSION);
        return end(out);
    }

    static ByteBuf challenge(ByteBufAllocator alloc, byte[] nonce) {
        ByteBuf out = begin(alloc, CHALLENGE);
        out.writeIntLE(MAGIC);
        out.writeShortLE(VERSION);
        out.writeBytes(nonce);
        return end(out);
    }

    /**
     * @param secret the shared secret, or null when the job runs without one (the proof is zeros)
     */
    static ByteBuf hello(ByteBufAllocator alloc, byte[] secret, byte[] challengeNonce, byte[] helloNonce) {
        ByteBuf out = begin(alloc, HELLO);
        out.writeIntLE(MAGIC);
        out.writeShortLE(VERSION);
        out.writeBoolean(secret != null);
        out.writeBytes(helloNonce);
        out.writeBytes(HandshakeProofs.mac(secret, HELLO_LABEL, challengeNonce, helloNonce));
        return end(out);
    }

    static ByteBuf proof(ByteBufAllocator alloc, byte[] secret, byte[] challengeNonce, byte[] helloNonce) {
        ByteBuf out = begin(alloc, PROOF);
        out.writeBytes(HandshakeProofs.mac(secret, PROOF_LABEL, helloNonce, challengeNonce));
        return end(out);
    }

    /** IDENTIFY or WELCOME: the identity's bytes, then their tag. */
    static ByteBuf identity(ByteBufAllocator alloc, byte type, byte[] secret, byte[] firstNonce, byte[] secondNonce,
            Identity identity) {
        ByteBuf out = begin(alloc, type);
        int identityAt = out.writerIndex();
        identity.write(out);
        byte[] identityBytes = new byte[out.writerIndex() - identityAt];
        out.getBytes(identityAt, identityBytes);
        out.writeBytes(HandshakeProofs.mac(secret, type == IDENTIFY ? IDENTIFY_LABEL : WELCOME_LABEL, firstNonce,
                secondNonce, identityBytes));
        return end(out);
    }

    /**
     * Reads an IDENTIFY or WELCOME body and checks its tag.
     *
     * @return the identity, or null if the tag does not hold
     */
    static Identity readIdentity(ByteBuf body, byte type, byte[] secret, byte[] firstNonce, byte[] secondNonce) {
        int identityAt = body.readerIndex();
        Identity identity = Identity.read(body);
        byte[] identityBytes = new byte[body.readerIndex() - identityAt];
        body.getBytes(identityAt, identityBytes);
        byte[] tag = new byte[PROOF_BYTES];
        body.readBytes(tag);
        return HandshakeProofs.holds(tag, secret, type == IDENTIFY ? IDENTIFY_LABEL : WELCOME_LABEL, firstNonce,
                secondNonce, identityBytes) ? identity : null;
    }

    static ByteBuf refuse(ByteBufAllocator alloc, String reason) {
        ByteBuf out = begin(alloc, REFUSE);
        writeString(out, reason);
        return end(out);
    }

    static ByteBuf abandon(ByteBufAllocator alloc, String reason) {
        ByteBuf out = begin(alloc, ABANDON);
        writeString(out, reason);
        return end(out);
    }

    static ByteBuf table(ByteBufAllocator alloc, List<Address> addresses) {
        ByteBuf out = begin(alloc, TABLE);
        out.writeIntLE(addresses.size());
        for (Address address : addresses) {
            writeString(out, address.host());
            out.writeIntLE(address.port());
        }
        return end(out);
    }

    static List<Address> readTable(ByteBuf in) {
        int count = in.readIntLE();
        if (count < 1 || count > in.readableBytes()) {
            throw new IllegalArgumentException("a table of " + count + " ranks");
        }
        List<Address> addresses = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            addresses.add(new Address(readString(in), in.readIntLE()));
        }
        return addresses;
    }

    private static ByteBuf begin(ByteBufAllocator alloc, byte type) {
        ByteBuf out = alloc.heapBuffer(128);
        out.writeIntLE(0);
        out.writeByte(type);
        return out;
    }

    private static ByteBuf end(ByteBuf out) {
        out.setIntLE(0, out.readableBytes() - 4);
        return out;
    }

    static void writeString(ByteBuf out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a string of " + bytes.length + " bytes, more than " + MAX_STRING_BYTES);
        }
        out.writeShortLE(bytes.length);
        out.writeBytes(bytes);
    }

    static String readString(ByteBuf in) {
        int length = in.readUnsignedShortLE();
        if (length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a string of " + length + " bytes");
        }
        return in.readCharSequence(length, StandardCharsets.UTF_8).toString();
    }
}
