package io.ringstar.transport.netty;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.handler.ssl.SslProvider;
import io.ringstar.InvalidConfigException;
import java.io.File;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * A rank's TLS: one context for the connections it accepts and one for those it makes, both with
 * its certificate and key, both requiring the other side's certificate to chain to the trusted
 * ones (mutual authentication). Peers are known by certificate, not by host name: ranks connect
 * to addresses from rank 0's table, which a certificate need not name. TLS 1.3 and 1.2, the JDK's
 * provider. Immutable and thread-safe.
 *
 * @param files the three files, for messages
 */
record TlsContexts(SslContext acceptor, SslContext initiator, String files) {
    static final String CERT_OPTION = "tls.cert";
    static final String KEY_OPTION = "tls.key";
    static final String TRUST_OPTION = "tls.trust";
    /** What a message tells the user to set for TLS. */
    static final String OPTIONS = "options " + CERT_OPTION + ", " + KEY_OPTION + " and " + TRUST_OPTION
            + " (--tls-cert, --tls-key, --tls-trust)";
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    /**
     * The contexts from the three options, or null when none is set (plain TCP).
     *
     * @throws InvalidConfigException naming the option when only some are set, a file is not
     *     readable, or its PEM does not parse
     */
    static TlsContexts from(UnaryOperator<String> option) {
        String cert = option.apply(CERT_OPTION);
        String key = option.apply(KEY_OPTION);
        String trust = option.apply(TRUST_OPTION);
        if (cert == null && key == null && trust == null) {
            return null;
        }
        File certFile = readable(CERT_OPTION, cert);
        File keyFile = readable(KEY_OPTION, key);
        File trustFile = readable(TRUST_OPTION, trust);
        SslContext acceptor;
        try {
            acceptor = SslContextBuilder.forServer(certFile, keyFile).trustManager(trustFile)
                    .clientAuth(ClientAuth.REQUIRE).sslProvider(SslProvider.JDK).protocols(PROTOCOLS).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new InvalidConfigException("options " + CERT_OPTION + ", " + KEY_OPTION + ", " + TRUST_OPTION,
                    cert + ", " + key + ", " + trust, "must be a PEM certificate chain, its unencrypted PKCS#8 PEM"
                    + " key ('BEGIN PRIVATE KEY') and PEM certificates to trust: " + rootMessage(e));
        }
        SslContext initiator;
        try {
            initiator = SslContextBuilder.forClient().keyManager(certFile, keyFile).trustManager(trustFile)
                    .endpointIdentificationAlgorithm(null).sslProvider(SslProvider.JDK).protocols(PROTOCOLS).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new InvalidConfigException("options " + CERT_OPTION + ", " + KEY_OPTION + ", " + TRUST_OPTION,
                    cert + ", " + key + ", " + trust, "cannot make a TLS client context: " + rootMessage(e));
        }
        return new TlsContexts(acceptor, initiator, "certificate " + cert + ", trusting " + trust);
    }

    private static File readable(String name, String path) {
        if (path == null) {
            throw new InvalidConfigException("option " + name, "(not set)", "is needed with the other TLS options: "
                    + OPTIONS + " go together");
        }
        if (!Files.isReadable(Path.of(path))) {
            throw new InvalidConfigException("option " + name, path, "must name a readable PEM file");
        }
        return new File(path);
    }

    /**
     * What went wrong in TLS, and whether a new connection could do better: a certificate that
     * does not chain to the trusted ones, or an alert by which the other side refused this rank's
     * certificate or every protocol and cipher it offered, will be refused again ({@code
     * permanent}); a handshake that timed out or was cut off by a closed connection, or a record
     * that did not decrypt, may go through on the next attempt.
     *
     * @param message what to tell the user, naming the cause
     * @param permanent true if trying again would meet the same refusal
     */
    record Failure(String message, boolean permanent) {
        private static final String ALERT = "Received fatal alert: ";
        private static final String TRUST_ADVICE = "; each rank's certificate must be, or be issued by, one of the"
                + " certificates in the other rank's " + TRUST_OPTION;

        /** The failure {@code thrown} stands for, or null if it is not a TLS failure. */
        static Failure of(Throwable thrown) {
            SSLException ssl = outermost(thrown);
            for (Throwable cause = thrown; cause != null; cause = cause.getCause()) {
                if (cause instanceof CertificateException || cause instanceof CertPathValidatorException
                        || cause instanceof CertPathBuilderException) {
                    return new Failure("the TLS handshake failed: " + (ssl != null ? ssl : cause).getMessage()
                            + TRUST_ADVICE, true);
                }
                if (cause.getCause() == cause) {
                    break;
                }
            }
            if (ssl instanceof SslHandshakeTimeoutException) {
                return new Failure("the TLS handshake did not finish in time (" + ssl.getMessage() + ")", false);
            }
            if (ssl != null && String.valueOf(ssl.getMessage()).startsWith("Connection closed while SSL/TLS")) {
                return new Failure("the connection closed during the TLS handshake", false);
            }
            if (ssl instanceof NotSslRecordException) {
                return new Failure("the TLS handshake failed: it sent bytes that are not TLS where TLS was due", true);
            }
            if (ssl == null) {
                return null;
            }
            String message = String.valueOf(ssl.getMessage());
            int alertAt = message.indexOf(ALERT);
            String alert = alertAt < 0 ? "" : message.substring(alertAt + ALERT.length()).trim();
            if (alert.contains("certificate") || alert.equals("unknown_ca") || alert.equals("access_denied")) {
                return new Failure("the TLS handshake failed: it refused this rank's certificate (alert " + alert + ")"
                        + TRUST_ADVICE, true);
            }
            if (alert.isEmpty() && ssl instanceof SSLHandshakeException && message.contains("certificate")) {
                // This side's own verdict on a certificate it was sent, or a certificate it lacks.
                return new Failure("the TLS handshake failed: " + message + TRUST_ADVICE, true);
            }
            if (alert.equals("handshake_failure") || alert.equals("protocol_version")
                    || alert.equals("insufficient_security")) {
                return new Failure("the TLS handshake failed: it accepts no protocol version or cipher suite this"
                        + " rank offers (alert " + alert + ")", true);
            }
            return new Failure("the TLS connection failed: " + message, false);
        }

        /** As {@link #of}, for the cause of a failed TLS handshake, which is a TLS failure whatever it is. */
        static Failure ofHandshake(Throwable thrown) {
            if (thrown instanceof ClosedChannelException) {
                // Netty's report of a connection that closed before the TLS handshake was done.
                return new Failure("the connection closed during the TLS handshake", false);
            }
            Failure failure = of(thrown);
            return failure != null ? failure : new Failure("the TLS handshake failed: " + thrown, false);
        }

        private static SSLException outermost(Throwable thrown) {
            for (Throwable cause = thrown; cause != null; cause = cause.getCause()) {
                if (cause instanceof SSLException ssl) {
                    return ssl;
                }
                if (cause.getCause() == cause) {
                    break;
                }
            }
            return null;
        }
    }

    /** The innermost message of a failure, where a PEM or key problem is described. */
    static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == failure ? String.valueOf(failure.getMessage()) : failure.getMessage() + " (" + root + ")";
    }
}
