package io.ringstar.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The records two ranks exchange before their connection carries frames, and the shared-secret
 * proofs in them. Every record is a little-endian {@code int32} length, a type byte and a body.
 *
 * <pre>
 *  acceptor                                   initiator
 *     CHALLENGE magic, version, nonce A  --->
 *                                        <--- HELLO magic, version, secret?, nonce B,
 *                                                   proof(A, B, identity), identity
 *     WELCOME proof(B, A, identity),     --->       (or REFUSE reason)
 *             identity
 *     TABLE addresses of all ranks       --->       (only for a registration with rank 0)
 * </pre>
 *
 * The acceptor checks the initiator's proof before it reads its identity, and sends nothing about
 * the job (its id, size or ranks) before the proof is good: a peer without the secret learns only
 * that a ringstar rank of some protocol version listens here. The initiator checks the acceptor's
 * proof in turn, so neither side talks to an impostor. A proof is HMAC-SHA256 over a label, both
 * nonces and the identity's bytes, so it cannot be replayed on another connection or moved to
 * another identity.
 */
final class Handshake {
    /** "RSTN" on the wire. */
    static final int MAGIC = 0x4E545352;
    static final short VERSION = 1;
    static final int NONCE_BYTES = 32;
    static final int PROOF_BYTES = 32;

    static final byte CHALLENGE = 1;
    static final byte HELLO = 2;
    static final byte WELCOME = 3;
    static final byte REFUSE = 4;
    static final byte TABLE = 5;

    /** The longest record an acceptor reads from a connection that has not proved anything yet. */
    static final int MAX_UNTRUSTED_RECORD = 4096;
    /** The longest record at all (a table of many ranks). */
    static final int MAX_RECORD = 1 << 20;

    static final byte PURPOSE_REGISTER = 1;
    static final byte PURPOSE_PEER = 2;

    private static final int MAX_STRING_BYTES = 1024;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] HELLO_LABEL = "ringstar hello".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] WELCOME_LABEL = "ringstar welcome".getBytes(StandardCharsets.US_ASCII);

    private Handshake() {
    }

    /** Who a rank says it is: the job, the group's size, its rank and where it listens. */
    record Identity(byte purpose, String jobId, int worldSize, int rank, String listenHost, int listenPort) {
        void write(ByteBuf out) {
            out.writeByte(purpose);
            out.writeIntLE(worldSize);
            out.writeIntLE(rank);
            writeString(out, jobId);
            writeString(out, listenHost);
            out.writeIntLE(listenPort);
        }

        static Identity read(ByteBuf in) {
            byte purpose = in.readByte();
            int worldSize = in.readIntLE();
            int rank = in.readIntLE();
            String jobId = readString(in);
            String host = readString(in);
            int port = in.readIntLE();
            return new Identity(purpose, jobId, worldSize, rank, host, port);
        }
    }

    /** One rank's listening address, as rank 0 tells it to the others. */
    record Address(String host, int port) {
        @Override
        public String toString() {
            return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
        }
    }

    static byte[] newNonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    static ByteBuf challenge(ByteBufAllocator alloc, byte[] nonce) {
        ByteBuf out = begin(alloc, CHALLENGE);
        out.writeIntLE(MAGIC);
        out.writeShortLE(VERSION);
        out.writeBytes(nonce);
        return end(out);
    }

    /**
     * @param secret the shared secret, or null when the job runs without one
     */
    static ByteBuf hello(ByteBufAllocator alloc, byte[] secret, byte[] challengeNonce, byte[] helloNonce, Identity identity) {
        ByteBuf out = begin(alloc, HELLO);
        out.writeIntLE(MAGIC);
        out.writeShortLE(VERSION);
        out.writeBoolean(secret != null);
        out.writeBytes(helloNonce);
        int proofAt = out.writerIndex();
        out.writeZero(PROOF_BYTES);
        int identityAt = out.writerIndex();
        identity.write(out);
        if (secret != null) {
            out.setBytes(proofAt, proof(secret, HELLO_LABEL, challengeNonce, helloNonce, out, identityAt));
        }
        return end(out);
    }

    static ByteBuf welcome(ByteBufAllocator alloc, byte[] secret, byte[] challengeNonce, byte[] helloNonce, Identity identity) {
        ByteBuf out = begin(alloc, WELCOME);
        int proofAt = out.writerIndex();
        out.writeZero(PROOF_BYTES);
        int identityAt = out.writerIndex();
        identity.write(out);
        if (secret != null) {
            out.setBytes(proofAt, proof(secret, WELCOME_LABEL, helloNonce, challengeNonce, out, identityAt));
        }
        return end(out);
    }

    static ByteBuf refuse(ByteBufAllocator alloc, String reason) {
        ByteBuf out = begin(alloc, REFUSE);
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

    /** Checks a HELLO's proof: the bytes from {@code identityAt} to the record's end are its identity. */
    static boolean helloProofHolds(byte[] secret, byte[] challengeNonce, byte[] helloNonce, byte[] proof, ByteBuf record,
            int identityAt) {
        return MessageDigest.isEqual(proof, proof(secret, HELLO_LABEL, challengeNonce, helloNonce, record, identityAt));
    }

    static boolean welcomeProofHolds(byte[] secret, byte[] challengeNonce, byte[] helloNonce, byte[] proof, ByteBuf record,
            int identityAt) {
        return MessageDigest.isEqual(proof, proof(secret, WELCOME_LABEL, helloNonce, challengeNonce, record, identityAt));
    }

    private static byte[] proof(byte[] secret, byte[] label, byte[] firstNonce, byte[] secondNonce, ByteBuf record,
            int identityAt) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            mac.update(firstNonce);
            mac.update(secondNonce);
            int end = record.writerIndex();
            mac.update(record.nioBuffer(identityAt, end - identityAt));
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
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
