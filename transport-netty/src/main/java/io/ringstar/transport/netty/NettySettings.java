package io.ringstar.transport.netty;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.spi.NetworkOptions;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The Netty transport's settings, read once from a {@link DistributedConfig}'s options (and the
 * {@value NettyTransport#SECRET_ENV} environment variable), each checked before any socket opens.
 *
 * @param tls this rank's TLS contexts, or null for plain TCP
 */
record NettySettings(String jobId, byte[] secret, InetAddress coordinatorAddress, int coordinatorPort,
        InetAddress bindAddress, String advertisedHost, int port, int ioThreads,
        long pauseReadingBytes, Duration handshakeTimeout, TlsContexts tls) {

    /** The most a connection waits for its handshake before the acceptor closes it. */
    static final Duration MAX_HANDSHAKE_TIME = Duration.ofSeconds(10);
    static final int MIN_RECEIVE_BUFFER_BYTES = NetworkOptions.MIN_RECEIVE_BUFFER_BYTES;

    static NettySettings from(DistributedConfig config, Map<String, String> environment) {
        UnaryOperator<String> option = name -> config.option(name).orElse(null);
        String jobId = NetworkOptions.jobId(option);
        byte[] secret = NetworkOptions.secret(option, environment);
        InetAddress coordinator = NetworkOptions.resolve("coordinatorAddr", config.coordinatorHost());
        int coordinatorPort = config.coordinatorPort();
        if (coordinatorPort == 0) {
            throw new InvalidConfigException("coordinatorAddr", config.coordinatorAddr(),
                    "needs a fixed port, since every rank must find rank 0 there");
        }
        String bindSpec = config.option(NettyTransport.BIND_OPTION).orElse(null);
        InetAddress bind;
        if (config.rank() == 0) {
            // Rank 0 listens where the others look for it, unless told to listen more widely.
            bind = bindSpec == null ? coordinator : NetworkOptions.bindAddress(bindSpec, coordinator);
        } else {
            bind = bindSpec == null ? NetworkOptions.routeTo(coordinator, coordinatorPort) : NetworkOptions.bindAddress(bindSpec, coordinator);
        }
        String advertised = (bind.isAnyLocalAddress() ? NetworkOptions.routeTo(coordinator, coordinatorPort) : bind).getHostAddress();
        int port = 0;
        String portText = config.option(NettyTransport.PORT_OPTION).orElse(null);
        if (portText != null) {
            try {
                port = Integer.parseInt(portText.trim());
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 0 || port > 65535) {
                throw new InvalidConfigException("option " + NettyTransport.PORT_OPTION, portText, "must be a port, 0 to 65535");
            }
        }
        int ioThreads = config.positiveIntOption(NettyTransport.IO_THREADS_OPTION, 1);
        long pauseReading = config.positiveIntOption(NettyTransport.RECEIVE_BUFFER_OPTION,
                NettyTransport.DEFAULT_RECEIVE_BUFFER_BYTES);
        if (pauseReading < MIN_RECEIVE_BUFFER_BYTES) {
            throw new InvalidConfigException("option " + NettyTransport.RECEIVE_BUFFER_OPTION, pauseReading,
                    "must be at least " + MIN_RECEIVE_BUFFER_BYTES + " bytes");
        }
        Duration handshake = config.timeout().compareTo(MAX_HANDSHAKE_TIME) < 0 ? config.timeout() : MAX_HANDSHAKE_TIME;
        TlsContexts tls = TlsContexts.from(option);
        return new NettySettings(jobId, secret, coordinator, coordinatorPort, bind, advertised, port, ioThreads,
                pauseReading, handshake, tls);
    }
}
