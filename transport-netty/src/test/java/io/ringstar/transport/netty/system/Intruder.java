package io.ringstar.transport.netty.system;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Random;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Hand-made bytes for a rank's listening port: garbage, broken records, and handshake records
 * written from the wire format in {@code io.ringstar.spi.handshake}'s Javadoc (little-endian
 * {@code int32} length, a type byte, a body; CHALLENGE, HELLO, PROOF, IDENTIFY, REFUSE), so a test can play a peer that
 * lies or does not know the secret. It mirrors that format on purpose: a change to it must show
 * up here as a failing test, not pass unnoticed.
 */
final class Intruder {
    /** "RSTH". */
    static final int MAGIC = 0x48545352;
    static final short VERSION = 3;
    static final byte CHALLENGE = 1;
    static final byte HELLO = 2;
    static final byte PROOF = 3;
    static final byte IDENTIFY = 4;
    static final byte REFUSE = 7;
    static final byte PURPOSE_REGISTER = 1;
    static final byte PURPOSE_PEER = 2;
    static final int NONCE_BYTES = 32;
    static final int PROOF_BYTES = 32;

    private Intruder() {
    }

    static Socket connect(int port, Duration readLimit) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        socket.setSoTimeout((int) readLimit.toMillis());
        return socket;
    }

    static byte[] randomBytes(long seed, int length) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** A record header claiming {@code length} bytes (type byte included), then {@code bodyBytes} zeros. */
    static byte[] recordHeader(int length, byte type, int bodyBytes) {
        ByteBuffer out = ByteBuffer.allocate(5 + bodyBytes).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(length).put(type);
        return out.array();
    }

    /** A data frame header (the format after the handshake) announcing {@code payloadLength} bytes. */
    static byte[] frameHeader(int payloadLength) {
        ByteBuffer out = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(payloadLength).putShort((short) 0x4652).put((byte) 1).put((byte) 1).putLong(payloadLength);
        return out.array();
    }

    /** Reads the acceptor's challenge; returns its nonce. */
    static byte[] readChallenge(InputStream in) throws IOException {
        ByteBuffer record = readRecord(in);
        byte type = record.get();
        if (type != CHALLENGE) {
            throw new AssertionError("the first record from a rank is of type " + type + ", not a challenge");
        }
        if (record.getInt() != MAGIC || record.getShort() != VERSION) {
            throw new AssertionError("the challenge lacks the magic or the version");
        }
        byte[] nonce = new byte[NONCE_BYTES];
        record.get(nonce);
        return nonce;
    }

    /** Reads the next record, which must be a refusal; returns its reason. */
    static String readRefusal(InputStream in) throws IOException {
        ByteBuffer record = readRecord(in);
        byte type = record.get();
        if (type != REFUSE) {
            throw new AssertionError("a record of type " + type + " where a refusal was due");
        }
        return reason(record);
    }

    private static String reason(ByteBuffer record) {
        int length = Short.toUnsignedInt(record.getShort());
        byte[] reason = new byte[length];
        record.get(reason);
        return new String(reason, StandardCharsets.UTF_8);
    }

    private static ByteBuffer readRecord(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        byte[] lengthBytes = new byte[4];
        data.readFully(lengthBytes);
        int length = ByteBuffer.wrap(lengthBytes).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (length < 1 || length > 1 << 20) {
            throw new AssertionError("a record of " + length + " bytes from a rank");
        }
        byte[] body = new byte[length];
        data.readFully(body);
        return ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * A HELLO record: magic, version, whether a secret is claimed, a fresh nonce and the proof.
     * With {@code secret} the proof is the real HMAC; without one it is random when a secret is
     * claimed (a peer that pretends to know it), zeros otherwise.
     */
    static byte[] hello(byte[] challengeNonce, byte[] helloNonce, short version, boolean claimSecret, byte[] secret) {
        byte[] proof = secret != null ? mac(secret, "ringstar hello", challengeNonce, helloNonce, new byte[0])
                : claimSecret ? randomBytes(System.nanoTime(), PROOF_BYTES) : new byte[PROOF_BYTES];
        ByteBuffer out = ByteBuffer.allocate(4 + 1 + 4 + 2 + 1 + NONCE_BYTES + PROOF_BYTES)
                .order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(out.capacity() - 4).put(HELLO).putInt(MAGIC).putShort(version).put((byte) (claimSecret ? 1 : 0))
                .put(helloNonce).put(proof);
        return out.array();
    }

    /** Reads the acceptor's PROOF record and checks it against the secret; fails the test if it does not hold. */
    static void readProof(InputStream in, byte[] secret, byte[] challengeNonce, byte[] helloNonce) throws IOException {
        ByteBuffer record = readRecord(in);
        byte type = record.get();
        if (type == REFUSE) {
            throw new AssertionError("refused where a proof was due: " + reason(record));
        }
        if (type != PROOF) {
            throw new AssertionError("a record of type " + type + " where the acceptor's proof was due");
        }
        byte[] proof = new byte[PROOF_BYTES];
        record.get(proof);
        if (!MessageDigest.isEqual(proof, mac(secret, "ringstar proof", helloNonce, challengeNonce, new byte[0]))) {
            throw new AssertionError("the rank's proof of the secret does not hold");
        }
    }

    /** An IDENTIFY record: the identity and its tag (a random one with {@code forgeTag}). */
    static byte[] identify(byte[] secret, byte[] challengeNonce, byte[] helloNonce, boolean forgeTag, byte purpose,
            String jobId, int worldSize, int rank, int targetRank) {
        byte[] identity = identity(purpose, jobId, worldSize, rank, targetRank, "127.0.0.1", 40000);
        byte[] tag = forgeTag ? randomBytes(System.nanoTime(), PROOF_BYTES)
                : mac(secret, "ringstar identify", challengeNonce, helloNonce, identity);
        ByteBuffer out = ByteBuffer.allocate(4 + 1 + identity.length + PROOF_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(out.capacity() - 4).put(IDENTIFY).put(identity).put(tag);
        return out.array();
    }

    private static byte[] identity(byte purpose, String jobId, int worldSize, int rank, int targetRank, String host,
            int port) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ByteBuffer fixed = ByteBuffer.allocate(13).order(ByteOrder.LITTLE_ENDIAN);
        fixed.put(purpose).putInt(worldSize).putInt(rank).putInt(targetRank);
        bytes.writeBytes(fixed.array());
        writeString(bytes, jobId);
        writeString(bytes, host);
        bytes.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(port).array());
        bytes.writeBytes(new byte[2]); // no details
        return bytes.toByteArray();
    }

    private static void writeString(ByteArrayOutputStream out, String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN).putShort((short) utf8.length).array());
        out.writeBytes(utf8);
    }

    private static byte[] mac(byte[] secret, String label, byte[] firstNonce, byte[] secondNonce, byte[] data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label.getBytes(StandardCharsets.US_ASCII));
            mac.update(firstNonce);
            mac.update(secondNonce);
            mac.update(data);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Reads and drops whatever the rank sends until it closes the connection.
     *
     * @return how long that took
     * @throws AssertionError if the connection is still open after the socket's read timeout
     */
    static Duration awaitClosedByRank(Socket socket, String what) throws IOException {
        long start = System.nanoTime();
        byte[] sink = new byte[4096];
        try {
            InputStream in = socket.getInputStream();
            while (in.read(sink) >= 0) {
                // drain: the challenge, perhaps a refusal
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("a rank kept a connection open for " + socket.getSoTimeout() + " ms after it "
                    + what);
        } catch (EOFException | SocketException e) {
            // reset: closed with our bytes unread, which is a close too
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** Writes {@code bytes}; a rank that has closed already makes this a no-op. */
    static void writeQuietly(Socket socket, byte[] bytes) {
        try {
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
        } catch (IOException e) {
            // The rank closed first, which is what the probe wants anyway.
        }
    }
}
