package io.ringstar.transport.netty;

import io.ringstar.DistributedConfig;
import io.ringstar.Transports;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.NetworkOptions;
import io.ringstar.config.OptionParser;
import io.ringstar.spi.NetworkSettings;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Netty transport's settings, read once from a {@link DistributedConfig}'s options (and the
 * {@value NettyTransport#SECRET_ENV} environment variable), each checked before any socket opens.
 * The options are declared here ({@link #OPTIONS}, published by {@link NettyTransportProvider}); an
 * option that neither they nor core declare is refused.
 *
 * @param tls this rank's TLS contexts, or null for plain TCP
 */
record NettySettings(String jobId, byte[] secret, InetAddress coordinatorAddress, int coordinatorPort,
        InetAddress bindAddress, String advertisedHost, int port, int ioThreads,
        long pauseReadingBytes, Duration handshakeTimeout, TlsContexts tls) {

    /** The most a connection waits for its handshake before the acceptor closes it. */
    static final Duration MAX_HANDSHAKE_TIME = Duration.ofSeconds(5);
    static final int MIN_RECEIVE_BUFFER_BYTES = NetworkOptions.MIN_RECEIVE_BUFFER_BYTES;

    /** Declares {@value NettyTransport#IO_THREADS_OPTION}. */
    static final ConfigOption<Integer> IO_THREADS = ConfigOption.builder(NettyTransport.IO_THREADS_OPTION,
                    OptionParser.positiveInt())
            .defaultValue(1).description("Netty event-loop threads, for forming the group and the listener").build();
    /** Declares {@value TlsContexts#CERT_OPTION}. */
    static final ConfigOption<Path> TLS_CERT = tlsFile(TlsContexts.CERT_OPTION, "tls-cert", "RINGSTAR_TLS_CERT",
            "this rank's certificate chain, a PEM file; TLS needs all three tls options or none");
    /** Declares {@value TlsContexts#KEY_OPTION}. */
    static final ConfigOption<Path> TLS_KEY = tlsFile(TlsContexts.KEY_OPTION, "tls-key", "RINGSTAR_TLS_KEY",
            "this rank's private key, an unencrypted PKCS#8 PEM file ('BEGIN PRIVATE KEY')");
    /** Declares {@value TlsContexts#TRUST_OPTION}. */
    static final ConfigOption<Path> TLS_TRUST = tlsFile(TlsContexts.TRUST_OPTION, "tls-trust", "RINGSTAR_TLS_TRUST",
            "the certificates (a CA's, or each peer's) a peer's certificate must chain to, a PEM file");
    /** Every option the Netty transport reads: the network options, then its own. */
    static final List<ConfigOption<?>> OPTIONS = options();

    /** The settings for {@link NettyTransport#NettyTransport(DistributedConfig) opening}: rank 0 needs a fixed port. */
    static NettySettings from(DistributedConfig config, Map<String, String> environment) {
        return read(config, environment, false);
    }

    /**
     * The settings for the first step of a two-step open ({@link NettyTransportProvider#bind}): rank 0
     * may be given port 0, and then listens on any free port.
     */
    static NettySettings forBind(DistributedConfig config, Map<String, String> environment) {
        return read(config, environment, true);
    }

    private static NettySettings read(DistributedConfig config, Map<String, String> environment,
            boolean rankZeroBindsFirst) {
        Transports.requireKnownOptions(config, OPTIONS);
        NetworkSettings network = rankZeroBindsFirst ? NetworkSettings.forBind(config, environment)
                : NetworkSettings.from(config, environment);
        if (network.coordinatorPort() == 0 && !rankZeroBindsFirst) {
            // Even alone: a Netty rank 0 always listens where others could look for it.
            throw NetworkSettings.fixedPortRequired(config);
        }
        InetAddress bind = network.bind();
        // A rank 0 told to listen on every interface (bind 0.0.0.0) still gives the others one address.
        // The port only goes into a probe of the route, and a probe cannot aim at port 0 (rank 0's
        // before it binds): any other port takes the same route.
        String advertised = (bind.isAnyLocalAddress()
                ? NetworkOptions.routeTo(network.coordinator(), Math.max(1, network.coordinatorPort())) : bind)
                .getHostAddress();
        int ioThreads = IO_THREADS.value(config);
        Duration handshake = config.timeout().compareTo(MAX_HANDSHAKE_TIME) < 0 ? config.timeout() : MAX_HANDSHAKE_TIME;
        List.of(TLS_CERT, TLS_KEY, TLS_TRUST).forEach(file -> file.ifSet(config));
        TlsContexts tls = TlsContexts.from(name -> config.option(name).orElse(null));
        return new NettySettings(network.jobId(), network.secret(), network.coordinator(), network.coordinatorPort(),
                bind, advertised, network.port(), ioThreads, network.receiveBufferBytes(), handshake, tls);
    }

    private static ConfigOption<Path> tlsFile(String name, String flag, String variable, String description) {
        return ConfigOption.builder(name, OptionParser.path().named("PEM")).flag(flag).environmentVariable(variable)
                .defaultText("none (no TLS)").description(description).build();
    }

    private static List<ConfigOption<?>> options() {
        List<ConfigOption<?>> options = new ArrayList<>(NetworkOptions.ALL);
        options.addAll(List.of(IO_THREADS, TLS_CERT, TLS_KEY, TLS_TRUST));
        return List.copyOf(options);
    }
}
