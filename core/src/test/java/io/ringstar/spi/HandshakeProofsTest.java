package io.ringstar.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class HandshakeProofsTest {
    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void theTagIsHmacSha256OfLabelNoncesAndDataInThatOrder() {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?", cut into the four parts.
        byte[] tag = HandshakeProofs.mac(ascii("Jefe"), ascii("what do ya "), ascii("want "), ascii("for "),
                ascii("nothing?"));
        assertEquals("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", HexFormat.of().formatHex(tag));
        assertArrayEquals(tag, HandshakeProofs.mac(ascii("Jefe"), ascii("what do ya "), ascii("want "),
                ascii("for nothing?")));
    }

    @Test
    void withoutASecretTheTagIsZerosAndOnlyTheRightSecretHolds() {
        byte[] first = HandshakeProofs.newNonce();
        byte[] second = HandshakeProofs.newNonce();
        assertEquals(HandshakeProofs.NONCE_BYTES, first.length);
        assertFalse(java.util.Arrays.equals(first, second), "two fresh nonces");
        assertArrayEquals(new byte[HandshakeProofs.PROOF_BYTES], HandshakeProofs.mac(null, ascii("l"), first, second));
        byte[] tag = HandshakeProofs.mac(ascii("s3cret"), ascii("l"), first, second, ascii("data"));
        assertTrue(HandshakeProofs.holds(tag, ascii("s3cret"), ascii("l"), first, second, ascii("data")));
        assertFalse(HandshakeProofs.holds(tag, ascii("other"), ascii("l"), first, second, ascii("data")));
        assertFalse(HandshakeProofs.holds(tag, ascii("s3cret"), ascii("l"), second, first, ascii("data")));
        assertFalse(HandshakeProofs.holds(tag, ascii("s3cret"), ascii("m"), first, second, ascii("data")));
    }
}
