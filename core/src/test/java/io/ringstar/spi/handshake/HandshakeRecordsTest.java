package io.ringstar.spi.handshake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.ringstar.spi.Frame;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The codec's byte layout, round trips and bounds. */
class HandshakeRecordsTest {

    @Test
    void theMagicIsRsthAndNotTheDataFrames() {
        ByteBuffer tls = HandshakeRecords.tls();
        assertEquals(4 + 1 + 6, tls.remaining());
        assertEquals(7, tls.getInt(0) & 0xff);
        assertEquals(HandshakeRecords.TLS, tls.get(4));
        assertArrayEquals("RSTH".getBytes(), new byte[] {tls.get(5), tls.get(6), tls.get(7), tls.get(8)});
        assertEquals(HandshakeRecords.VERSION, (short) ((tls.get(9) & 0xff) | (tls.get(10) << 8)));
        assertNotEquals(Frame.MAGIC, HandshakeRecords.MAGIC);
        assertNull(HandshakeRecords.checkTls(HandshakeRecords.order(tls.position(5).slice())));
        assertEquals("it is not a ringstar rank (its TLS record lacks the magic)",
                HandshakeRecords.checkTls(ByteBuffer.wrap(new byte[6])));
    }

    @Test
    void theTypeCodesFollowTheExchange() {
        byte[] codes = {HandshakeRecords.CHALLENGE, HandshakeRecords.HELLO, HandshakeRecords.PROOF,
            HandshakeRecords.IDENTIFY, HandshakeRecords.WELCOME, HandshakeRecords.TABLE, HandshakeRecords.REFUSE,
            HandshakeRecords.ABANDON, HandshakeRecords.TLS};
        for (int i = 0; i < codes.length; i++) {
            assertEquals(i + 1, codes[i]);
        }
    }

    @Test
    void identitiesAndTablesRoundTrip() {
        byte[] secret = {1, 2, 3};
        byte[] a = new byte[32];
        byte[] b = new byte[32];
        b[0] = 9;
        Identity identity = new Identity(HandshakeRecords.PURPOSE_PEER, "jöb", 5, 3, 1, "::1", 6000,
                new byte[] {7, 8});
        ByteBuffer record = HandshakeRecords.identity(HandshakeRecords.WELCOME, secret, a, b, identity);
        ByteBuffer body = HandshakeRecords.order(record.position(5).slice());
        Identity read = HandshakeRecords.readIdentity(body, HandshakeRecords.WELCOME, secret, a, b);
        assertEquals(identity, read);
        assertNotEquals(identity, read.aimedAt(2));
        assertEquals(identity.targetRank(), read.targetRank());
        assertArrayEquals(identity.details(), read.details());
        assertEquals("[::1]:6000", read.address());
        assertNull(HandshakeRecords.readIdentity(HandshakeRecords.order(record.position(5).slice()),
                HandshakeRecords.IDENTIFY, secret, a, b), "a welcome's tag does not hold as an identify's");

        Table table = new Table(-5, List.of(identity, identity.aimedAt(0)));
        ByteBuffer tableRecord = HandshakeRecords.table(secret, a, b, table);
        Table back = HandshakeRecords.readTable(HandshakeRecords.order(tableRecord.position(5).slice()), secret, a, b);
        assertEquals(-5, back.nonce());
        assertEquals(2, back.ranks().size());
        assertEquals(0, back.ranks().get(1).targetRank());
        assertNull(HandshakeRecords.readTable(HandshakeRecords.order(tableRecord.position(5).slice()), secret, b, a),
                "the nonces' order counts");
    }

    @Test
    void reasonsRoundTripAndLongOnesAreCutShort() {
        ByteBuffer refuse = HandshakeRecords.refuse("no");
        assertEquals(HandshakeRecords.REFUSE, refuse.get(4));
        assertEquals("no", HandshakeRecords.readReason(HandshakeRecords.order(refuse.position(5).slice())));
        ByteBuffer abandon = HandshakeRecords.abandon("x".repeat(5000));
        assertEquals(HandshakeRecords.ABANDON, abandon.get(4));
        assertEquals(HandshakeRecords.MAX_STRING_BYTES,
                HandshakeRecords.readReason(HandshakeRecords.order(abandon.position(5).slice())).length());
    }

    @Test
    void lengthsAndStringsOutOfBoundsAreRefused() {
        assertEquals(1, HandshakeRecords.checkLength(1, 10));
        assertThrows(IllegalArgumentException.class, () -> HandshakeRecords.checkLength(0, 10));
        assertThrows(IllegalArgumentException.class, () -> HandshakeRecords.checkLength(11, 10));
        assertThrows(IllegalArgumentException.class, () -> HandshakeRecords.checkLength(-1, 10));
        assertThrows(IllegalArgumentException.class, () -> HandshakeRecords.readString(
                HandshakeRecords.order(ByteBuffer.allocate(4)).putShort(0, (short) 2000)));
        assertThrows(IllegalArgumentException.class, () -> HandshakeRecords.readString(
                HandshakeRecords.order(ByteBuffer.allocate(4)).putShort(0, (short) 3)));
        assertThrows(IllegalArgumentException.class, () -> HandshakeRecords.writeString(ByteBuffer.allocate(5000),
                "y".repeat(1025)));
        assertThrows(IllegalArgumentException.class, () -> HandshakeRecords.identity(HandshakeRecords.IDENTIFY, null,
                new byte[32], new byte[32], new Identity((byte) 1, "j", 2, 1, 0, "h", 1, new byte[1025])));
    }
}
