package io.ringstar.internal.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveMismatchException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.PeerFailureException;
import io.ringstar.internal.protocol.FailureKind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class AbortNoticeTest {

    @Test
    void encodeThenDecodeRoundTrips() {
        AbortNotice notice = new AbortNotice(FailureKind.MISMATCH, 5, CollectiveException.NO_RANK,
                "reduceGradients on rank 5 (peer rank 2): shapes differ, π ≠ 3");
        ByteBuffer encoded = notice.encode();
        int textBytes = notice.text.getBytes(StandardCharsets.UTF_8).length;
        assertEquals(0, encoded.position());
        assertEquals(AbortNotice.HEADER_BYTES + textBytes, encoded.limit());

        AbortNotice decoded = AbortNotice.decode(encoded, 0, encoded.remaining());
        assertNotNull(decoded);
        assertEquals(FailureKind.MISMATCH, decoded.kind);
        assertEquals(5, decoded.originRank);
        assertEquals(notice.text, decoded.text);
    }

    @Test
    void layoutIsLittleEndianAsDocumented() {
        ByteBuffer encoded = new AbortNotice(FailureKind.PEER_FAILURE, 0x01020304, 0x0A0B0C0D, "ab").encode();
        assertEquals(18, encoded.remaining());
        byte[] expected = {2, 0, 0, 0, 4, 3, 2, 1, 0x0D, 0x0C, 0x0B, 0x0A, 2, 0, 0, 0, 'a', 'b'};
        byte[] actual = new byte[18];
        encoded.duplicate().get(actual);
        assertEquals(java.util.Arrays.toString(expected), java.util.Arrays.toString(actual));
    }

    @Test
    void decodesAtAnOffsetInsideALargerBuffer() {
        ByteBuffer encoded = new AbortNotice(FailureKind.TIMEOUT, 9, CollectiveException.NO_RANK, "timed out").encode();
        ByteBuffer message = ByteBuffer.allocate(48 + encoded.remaining() + 16);
        for (int i = 0; i < message.capacity(); i++) {
            message.put(i, (byte) 0x7F);
        }
        message.put(48, encoded, 0, encoded.remaining());
        message.position(3); // decode uses absolute indices, not the position

        AbortNotice decoded = AbortNotice.decode(message, 48, encoded.remaining());
        assertNotNull(decoded);
        assertEquals(FailureKind.TIMEOUT, decoded.kind);
        assertEquals(9, decoded.originRank);
        assertEquals("timed out", decoded.text);
        assertEquals(3, message.position());
        assertEquals(ByteOrder.BIG_ENDIAN, message.order(), "decode does not change the caller's byte order");
    }

    @Test
    void emptyTextRoundTrips() {
        ByteBuffer encoded = new AbortNotice(FailureKind.OTHER, 0, CollectiveException.NO_RANK, "").encode();
        assertEquals(AbortNotice.HEADER_BYTES, encoded.remaining());
        AbortNotice decoded = AbortNotice.decode(encoded, 0, AbortNotice.HEADER_BYTES);
        assertNotNull(decoded);
        assertEquals(FailureKind.OTHER, decoded.kind);
        assertEquals("", decoded.text);
    }

    @Test
    void longTextIsTruncatedToTheMaximum() {
        String text = "x".repeat(5000);
        ByteBuffer encoded = new AbortNotice(FailureKind.OTHER, 1, CollectiveException.NO_RANK, text).encode();
        assertEquals(AbortNotice.MAX_BYTES, encoded.remaining());
        assertEquals(AbortNotice.HEADER_BYTES + 2000, AbortNotice.MAX_BYTES);
        assertEquals(2000, encoded.getInt(12));
        AbortNotice decoded = AbortNotice.decode(encoded, 0, encoded.remaining());
        assertNotNull(decoded);
        assertEquals("x".repeat(2000), decoded.text);
    }

    @Test
    void textOfExactlyTheMaximumIsKept() {
        String text = "é".repeat(1000); // 2000 UTF-8 bytes
        ByteBuffer encoded = new AbortNotice(FailureKind.OTHER, 1, CollectiveException.NO_RANK, text).encode();
        assertEquals(AbortNotice.MAX_BYTES, encoded.remaining());
        assertEquals(text, AbortNotice.decode(encoded, 0, encoded.remaining()).text);
    }

    @Test
    void truncationKeepsWholeCharacters() {
        String text = "a" + "é".repeat(1500); // 1 + 3000 bytes; byte 2000 is the middle of an 'é'
        ByteBuffer encoded = new AbortNotice(FailureKind.OTHER, 1, CollectiveException.NO_RANK, text).encode();
        String decoded = AbortNotice.decode(encoded, 0, encoded.remaining()).text;
        assertTrue(text.startsWith(decoded), "decoded text ends with " + (int) decoded.charAt(decoded.length() - 1));
        assertEquals(1 + 999, decoded.length());
    }

    @Test
    void tooShortIsNotANotice() {
        ByteBuffer encoded = new AbortNotice(FailureKind.TIMEOUT, 2, CollectiveException.NO_RANK, "hello").encode();
        for (int length = 0; length < AbortNotice.HEADER_BYTES; length++) {
            assertNull(AbortNotice.decode(encoded, 0, length), "length " + length);
        }
    }

    @Test
    void textLengthBeyondTheMessageIsNotANotice() {
        ByteBuffer encoded = new AbortNotice(FailureKind.TIMEOUT, 2, CollectiveException.NO_RANK, "hello").encode();
        // The message is cut one byte short of the text it announces.
        assertNull(AbortNotice.decode(encoded, 0, encoded.remaining() - 1));

        ByteBuffer garbage = ByteBuffer.allocate(64);
        for (int i = 0; i < 64; i++) {
            garbage.put(i, (byte) 0xFF); // text length -1
        }
        assertNull(AbortNotice.decode(garbage, 0, 64));

        ByteBuffer huge = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        huge.put(0, (byte) FailureKind.OTHER.code());
        huge.putInt(12, Integer.MAX_VALUE);
        assertNull(AbortNotice.decode(huge, 0, 64));
        huge.putInt(12, 49); // 16 + 49 > 64
        assertNull(AbortNotice.decode(huge, 0, 64));
        huge.putInt(12, 48); // exactly fits
        AbortNotice fits = AbortNotice.decode(huge, 0, 64);
        assertNotNull(fits);
        assertEquals(48, fits.text.length());
    }

    @Test
    void ofKeepsTheFailureKindAndMessage() {
        CollectiveException timeout = new CollectiveTimeoutException("recv", 1, 2, "no data for 5 s");
        AbortNotice notice = AbortNotice.of(1, timeout);
        assertEquals(FailureKind.TIMEOUT, notice.kind);
        assertEquals(1, notice.originRank);
        assertEquals(2, notice.concernedRank);
        assertEquals(2, notice.culprit());
        assertEquals(2, AbortNotice.decode(notice.encode(), 0, notice.encode().remaining()).culprit());
        assertEquals("recv on rank 1 (peer rank 2): no data for 5 s", notice.text);

        assertEquals(FailureKind.PEER_FAILURE,
                AbortNotice.of(0, new PeerFailureException("recv", 0, 1, "gone")).kind);
        assertEquals(FailureKind.MISMATCH,
                AbortNotice.of(0, new CollectiveMismatchException("reduceGradients", 0, 1, "shape")).kind);
        assertEquals(FailureKind.OTHER, AbortNotice.of(0, new CollectiveException("send", 0, 1, "x")).kind);
    }

    @Test
    void aNoticeOfAnUnknownKindStillStopsTheGroupAndNamesTheCode() {
        ByteBuffer encoded = new AbortNotice(FailureKind.OTHER, 3, CollectiveException.NO_RANK, "disk full").encode();
        encoded.put(0, (byte) 77);
        AbortNotice decoded = AbortNotice.decode(encoded, 0, encoded.remaining());
        assertEquals(FailureKind.OTHER, decoded.kind);
        assertEquals(3, decoded.originRank);
        assertEquals("failure of unknown kind code 77: disk full", decoded.text);
    }
}
