package io.ringstar.transport.netty;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertificateException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/**
 * Which TLS failures an initiator gives up on at once (a certificate the other side will refuse
 * again) and which it retries until its deadline (a handshake cut short or timed out), and that
 * each message names its cause. The exceptions are built as the JDK and Netty raise them.
 */
class TlsFailureTest {

    private static TlsContexts.Failure permanent(Throwable thrown, String says) {
        TlsContexts.Failure failure = TlsContexts.Failure.of(thrown);
        assertNotNull(failure, thrown + " is a TLS failure");
        assertTrue(failure.permanent(), failure + " is no hiccup: the next attempt meets the same refusal");
        assertTrue(failure.message().contains(says), failure.message());
        return failure;
    }

    private static void worthRetrying(TlsContexts.Failure failure, String says) {
        assertFalse(failure.permanent(), failure + " may go through on the next attempt");
        assertTrue(failure.message().contains(says), failure.message());
    }

    @Test
    void anUntrustedCertificateOrAnAlertAboutOneIsPermanentAndPointsAtTheTrustOption() {
        SSLHandshakeException untrusted = new SSLHandshakeException("PKIX path building failed");
        untrusted.initCause(new CertificateException("unable to find valid certification path"));
        assertTrue(permanent(new DecoderException(untrusted), "PKIX path building failed").message()
                .contains(TlsContexts.TRUST_OPTION));
        // The JDK's words when the other side sent no certificate this side trusts (it had none the CA list named).
        permanent(new SSLHandshakeException("Empty client certificate chain"), TlsContexts.TRUST_OPTION);
        for (String alert : new String[] {"certificate_unknown", "bad_certificate", "unknown_ca"}) {
            assertTrue(permanent(new SSLHandshakeException("Received fatal alert: " + alert), "alert " + alert)
                    .message().contains("refused this rank's certificate"));
        }
    }

    @Test
    void noCommonProtocolOrBytesThatAreNotTlsArePermanentToo() {
        permanent(new SSLHandshakeException("Received fatal alert: protocol_version"), "no protocol version");
        permanent(new DecoderException(new NotSslRecordException("not an SSL/TLS record: 0400")), "not TLS");
    }

    @Test
    void aHandshakeTimedOutOrCutShortIsRetriedAndSaysSo() {
        worthRetrying(TlsContexts.Failure.of(new SslHandshakeTimeoutException("handshake timed out after 10000ms")),
                "did not finish in time");
        worthRetrying(TlsContexts.Failure.of(new SSLHandshakeException(
                "Connection closed while SSL/TLS handshake was in progress")), "closed during the TLS handshake");
        // Netty's handshake event for a connection that closed: a ClosedChannelException.
        worthRetrying(TlsContexts.Failure.ofHandshake(new ClosedChannelException()), "closed during the TLS handshake");
        worthRetrying(TlsContexts.Failure.of(new SSLException("Tag mismatch")), "Tag mismatch");
    }

    @Test
    void aFailureOutsideTlsIsNoneOfTls() {
        assertNull(TlsContexts.Failure.of(new IOException("Connection reset by peer")));
        assertNull(TlsContexts.Failure.of(new ClosedChannelException()));
        assertFalse(TlsContexts.Failure.ofHandshake(new IOException("Connection reset by peer")).permanent());
    }
}
