package io.ringstar.spi;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The cryptography of the network transports' handshakes, one implementation for all of them so
 * that their proofs stay byte for byte the same: fresh nonces, and HMAC-SHA256 tags over a label,
 * both nonces and the record's bytes. A label per record type keeps a tag from being replayed as
 * another record; the nonces keep it from being replayed on another connection. Thread-safe.
 */
public final class HandshakeProofs {
    public static final int NONCE_BYTES = 32;
    public static final int PROOF_BYTES = 32;

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] NO_BYTES = new byte[0];

    private HandshakeProofs() {
    }

    /** A label's bytes (US-ASCII), computed once per label by the caller. */
    public static byte[] label(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /** {@value #NONCE_BYTES} random bytes from a {@link SecureRandom}. */
    public static byte[] newNonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /**
     * HMAC-SHA256 of the label, the nonces and the data under {@code secret}; {@value #PROOF_BYTES}
     * zeros when there is no secret (the records keep their shape either way).
     */
    public static byte[] mac(byte[] secret, byte[] label, byte[] firstNonce, byte[] secondNonce, byte[] data) {
        if (secret == null) {
            return new byte[PROOF_BYTES];
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            mac.update(firstNonce);
            mac.update(secondNonce);
            mac.update(data);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    /** {@link #mac} over no data. */
    public static byte[] mac(byte[] secret, byte[] label, byte[] firstNonce, byte[] secondNonce) {
        return mac(secret, label, firstNonce, secondNonce, NO_BYTES);
    }

    /** True if {@code tag} is what a holder of {@code secret} computes; compared in constant time. */
    public static boolean holds(byte[] tag, byte[] secret, byte[] label, byte[] firstNonce, byte[] secondNonce,
            byte[] data) {
        return MessageDigest.isEqual(tag, mac(secret, label, firstNonce, secondNonce, data));
    }

    /** {@link #holds} over no data. */
    public static boolean holds(byte[] tag, byte[] secret, byte[] label, byte[] firstNonce, byte[] secondNonce) {
        return holds(tag, secret, label, firstNonce, secondNonce, NO_BYTES);
    }
}
