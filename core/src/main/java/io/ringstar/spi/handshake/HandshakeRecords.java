package io.ringstar.spi.handshake;

import io.ringstar.spi.HandshakeProofs;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The codec of the handshake's records (the layout is drawn in this package's Javadoc): builds
 * each record as a whole, length prefix included, and reads their bodies. Every read throws
 * {@link java.nio.BufferUnderflowException} or {@link IllegalArgumentException} on a record cut
 * short or out of bounds; the state machines turn those into refusals. Stateless and thread-safe.
 */
public final class HandshakeRecords {
    /** "RSTH" read as a little-endian int; distinct from the data frames' "RSTF". */
    public static final int MAGIC = 0x48545352;
    /** 3: the first version shared by every network transport. */
    public static final short VERSION = 3;
    public static final int NONCE_BYTES = HandshakeProofs.NONCE_BYTES;
    public static final int PROOF_BYTES = HandshakeProofs.PROOF_BYTES;
    /** The record's length prefix. */
    public static final int LENGTH_BYTES = 4;

    public static final byte CHALLENGE = 1;
    public static final byte HELLO = 2;
    public static final byte PROOF = 3;
    public static final byte IDENTIFY = 4;
    public static final byte WELCOME = 5;
    public static final byte TABLE = 6;
    public static final byte REFUSE = 7;
    public static final byte ABANDON = 8;
    /** Sent in plain text, first, by an acceptor that speaks TLS (the Netty transport). */
    public static final byte TLS = 9;

    /** A registration with rank 0, which answers with the table. */
    public static final byte PURPOSE_REGISTER = 1;
    /** A connection between two ranks that know the table. */
    public static final byte PURPOSE_PEER = 2;

    /** The longest record read from a peer that has not proved anything yet. */
    public static final int MAX_UNTRUSTED_RECORD = 4096;
    /** The longest record at all (a table of many ranks). */
    public static final int MAX_RECORD = 1 << 20;
    public static final int MAX_STRING_BYTES = 1024;
    public static final int MAX_DETAILS_BYTES = 1024;

    static final byte[] HELLO_LABEL = HandshakeProofs.label("ringstar hello");
    static final byte[] PROOF_LABEL = HandshakeProofs.label("ringstar proof");
    static final byte[] IDENTIFY_LABEL = HandshakeProofs.label("ringstar identify");
    static final byte[] WELCOME_LABEL = HandshakeProofs.label("ringstar welcome");
    static final byte[] TABLE_LABEL = HandshakeProofs.label("ringstar table");

    private HandshakeRecords() {
    }

    /**
     * Checks a record's length prefix (the type byte and the body) against {@code limit}.
     *
     * @throws IllegalArgumentException if it is not between 1 and {@code limit}
     */
    public static int checkLength(int length, int limit) {
        if (length < 1 || length > limit) {
            throw new IllegalArgumentException("a handshake record of " + Integer.toUnsignedString(length) + " bytes");
        }
        return length;
    }

    /** The plain-text TLS announcement: magic, version. */
    public static ByteBuffer tls() {
        return end(begin(TLS, 6).putInt(MAGIC).putShort(VERSION));
    }

    /** Checks the body of a TLS announcement; returns null if it holds, else what is wrong. */
    public static String checkTls(ByteBuffer body) {
        return order(body).getInt() == MAGIC ? null : "it is not a ringstar rank (its TLS record lacks the magic)";
    }

    public static ByteBuffer challenge(byte[] nonce) {
        return end(begin(CHALLENGE, 6 + NONCE_BYTES).putInt(MAGIC).putShort(VERSION).put(nonce));
    }

    /** @param secret the shared secret, or null (the proof is zeros) */
    public static ByteBuffer hello(byte[] secret, byte[] challengeNonce, byte[] helloNonce) {
        return end(begin(HELLO, 7 + NONCE_BYTES + PROOF_BYTES).putInt(MAGIC).putShort(VERSION)
                .put((byte) (secret != null ? 1 : 0)).put(helloNonce)
                .put(HandshakeProofs.mac(secret, HELLO_LABEL, challengeNonce, helloNonce)));
    }

    public static ByteBuffer proof(byte[] secret, byte[] challengeNonce, byte[] helloNonce) {
        return end(begin(PROOF, PROOF_BYTES).put(HandshakeProofs.mac(secret, PROOF_LABEL, helloNonce, challengeNonce)));
    }

    /** IDENTIFY or WELCOME: the identity's bytes, then their tag over both nonces in the given order. */
    public static ByteBuffer identity(byte type, byte[] secret, byte[] firstNonce, byte[] secondNonce,
            Identity identity) {
        byte[] bytes = identityBytes(identity);
        byte[] label = type == IDENTIFY ? IDENTIFY_LABEL : WELCOME_LABEL;
        return end(begin(type, bytes.length + PROOF_BYTES).put(bytes)
                .put(HandshakeProofs.mac(secret, label, firstNonce, secondNonce, bytes)));
    }

    /** Reads an IDENTIFY or WELCOME body; returns the identity, or null if its tag does not hold. */
    public static Identity readIdentity(ByteBuffer body, byte type, byte[] secret, byte[] firstNonce,
            byte[] secondNonce) {
        int start = body.position();
        Identity identity = readIdentity(body);
        byte[] bytes = new byte[body.position() - start];
        body.duplicate().position(start).get(bytes);
        byte[] tag = bytes(body, PROOF_BYTES);
        byte[] label = type == IDENTIFY ? IDENTIFY_LABEL : WELCOME_LABEL;
        return HandshakeProofs.holds(tag, secret, label, firstNonce, secondNonce, bytes) ? identity : null;
    }

    /** The table, tagged for the connection whose nonces are given (acceptor's first). */
    public static ByteBuffer table(byte[] secret, byte[] challengeNonce, byte[] helloNonce, Table table) {
        List<byte[]> ranks = new ArrayList<>(table.ranks().size());
        int size = 8;
        for (Identity rank : table.ranks()) {
            ranks.add(identityBytes(rank));
            size += ranks.get(ranks.size() - 1).length;
        }
        ByteBuffer content = order(ByteBuffer.allocate(size)).putInt(table.nonce()).putInt(ranks.size());
        ranks.forEach(content::put);
        byte[] bytes = content.array();
        return end(begin(TABLE, bytes.length + PROOF_BYTES).put(bytes)
                .put(HandshakeProofs.mac(secret, TABLE_LABEL, challengeNonce, helloNonce, bytes)));
    }

    /** Reads a TABLE body; returns the table, or null if its tag does not hold. */
    public static Table readTable(ByteBuffer body, byte[] secret, byte[] challengeNonce, byte[] helloNonce) {
        byte[] bytes = bytes(body, body.remaining() - PROOF_BYTES);
        byte[] tag = bytes(body, PROOF_BYTES);
        if (!HandshakeProofs.holds(tag, secret, TABLE_LABEL, challengeNonce, helloNonce, bytes)) {
            return null;
        }
        ByteBuffer content = order(ByteBuffer.wrap(bytes));
        int nonce = content.getInt();
        int count = content.getInt();
        if (count < 1 || count > content.remaining()) {
            throw new IllegalArgumentException("a table of " + count + " ranks");
        }
        List<Identity> ranks = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            ranks.add(readIdentity(content));
        }
        return new Table(nonce, ranks);
    }

    /** A REFUSE record; a reason longer than a string may be is cut short. */
    public static ByteBuffer refuse(String reason) {
        return reason(REFUSE, reason);
    }

    /** An ABANDON record: rank 0 tells a registered rank why the group will not form. */
    public static ByteBuffer abandon(String reason) {
        return reason(ABANDON, reason);
    }

    private static ByteBuffer reason(byte type, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int length = Math.min(text.length, MAX_STRING_BYTES);
        return end(begin(type, 2 + length).putShort((short) length).put(text, 0, length));
    }

    /** Reads the reason of a REFUSE or ABANDON body. */
    public static String readReason(ByteBuffer body) {
        return readString(body);
    }

    private static byte[] identityBytes(Identity identity) {
        ByteBuffer out = order(ByteBuffer.allocate(20 + 3 * (2 + MAX_STRING_BYTES)));
        writeIdentity(out, identity);
        byte[] bytes = new byte[out.position()];
        out.flip().get(bytes);
        return bytes;
    }

    private static void writeIdentity(ByteBuffer out, Identity identity) {
        if (identity.details().length > MAX_DETAILS_BYTES) {
            throw new IllegalArgumentException("details of " + identity.details().length + " bytes, more than "
                    + MAX_DETAILS_BYTES);
        }
        out.put(identity.purpose()).putInt(identity.worldSize()).putInt(identity.rank()).putInt(identity.targetRank());
        writeString(out, identity.jobId());
        writeString(out, identity.host());
        out.putInt(identity.port());
        out.putShort((short) identity.details().length).put(identity.details());
    }

    private static Identity readIdentity(ByteBuffer in) {
        byte purpose = in.get();
        int worldSize = in.getInt();
        int rank = in.getInt();
        int target = in.getInt();
        String jobId = readString(in);
        String host = readString(in);
        int port = in.getInt();
        int detailsLength = Short.toUnsignedInt(in.getShort());
        if (detailsLength > MAX_DETAILS_BYTES) {
            throw new IllegalArgumentException("details of " + detailsLength + " bytes");
        }
        return new Identity(purpose, jobId, worldSize, rank, target, host, port, bytes(in, detailsLength));
    }

    /** Writes a string as an unsigned {@code int16} length and UTF-8 bytes (for transports' details too). */
    public static void writeString(ByteBuffer out, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a string of " + bytes.length + " bytes, more than " + MAX_STRING_BYTES);
        }
        out.putShort((short) bytes.length).put(bytes);
    }

    /** Reads what {@link #writeString} wrote. */
    public static String readString(ByteBuffer in) {
        int length = Short.toUnsignedInt(in.getShort());
        if (length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a string of " + length + " bytes");
        }
        return new String(bytes(in, length), StandardCharsets.UTF_8);
    }

    public static byte[] bytes(ByteBuffer in, int count) {
        if (count < 0 || count > in.remaining()) {
            throw new IllegalArgumentException("a record cut short");
        }
        byte[] out = new byte[count];
        in.get(out);
        return out;
    }

    /** A little-endian view, as every record is read and written. */
    public static ByteBuffer order(ByteBuffer buffer) {
        return buffer.order(ByteOrder.LITTLE_ENDIAN);
    }

    private static ByteBuffer begin(byte type, int bodyLength) {
        return order(ByteBuffer.allocate(LENGTH_BYTES + 1 + bodyLength)).putInt(1 + bodyLength).put(type);
    }

    private static ByteBuffer end(ByteBuffer record) {
        record.putInt(0, record.position() - LENGTH_BYTES);
        return record.flip();
    }
}
