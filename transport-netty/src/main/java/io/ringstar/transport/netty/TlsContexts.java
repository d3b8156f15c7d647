package io.ringstar.transport.netty;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.ringstar.ConfigSources;
import io.ringstar.InvalidConfigException;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLException;

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
    static final String CERT_OPTION = ConfigSources.TLS_CERT_OPTION;
    static final String KEY_OPTION = ConfigSources.TLS_KEY_OPTION;
    static final String TRUST_OPTION = ConfigSources.TLS_TRUST_OPTION;
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
     * What went wrong in TLS, if {@code failure} is a TLS failure (a handshake refused by either
     * side, an alert, bytes that are not TLS); null for any other failure.
     */
    static String tlsFailure(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SSLException || cause instanceof io.netty.handler.ssl.NotSslRecordException) {
                return "the TLS handshake failed: " + cause.getMessage() + "; each rank's certificate must be, or"
                        + " be issued by, one of the certificates in the other rank's " + TRUST_OPTION;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
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
