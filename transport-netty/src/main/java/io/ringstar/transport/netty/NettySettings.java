package io.ringstar.transport.netty;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The Netty transport's settings, read once from a {@link DistributedConfig}'s options (and the
 * {@value NettyTransport#SECRET_ENV} environment variable), each checked before any socket opens.
 */
record NettySettings(String jobId, byte[] secret, InetAddress coordinatorAddress, int coordinatorPort,
        InetAddress bindAddress, String advertisedHost, int port, int ioThreads, boolean epoll,
        long pauseReadingBytes, Duration handshakeTimeout) {

    /** The most a connection waits for its handshake before the acceptor closes it. */
    static final Duration MAX_HANDSHAKE_TIME = Duration.ofSeconds(10);
    /** The smallest receive buffer accepted: a few frames' worth of small messages. */
    static final int MIN_RECEIVE_BUFFER_BYTES = 64 << 10;

    static NettySettings from(DistributedConfig config, Map<String, String> environment) {
        String jobId = config.option(NettyTransport.JOB_ID_OPTION).orElse(NettyTransport.DEFAULT_JOB_ID);
        if (jobId.isEmpty() || jobId.getBytes(StandardCharsets.UTF_8).length > 256) {
            throw new InvalidConfigException("option " + NettyTransport.JOB_ID_OPTION, jobId, "must be 1 to 256 bytes");
        }
        byte[] secret = secret(config, environment);
        InetAddress coordinator = resolve("coordinatorAddr", config.coordinatorHost());
        int coordinatorPort = config.coordinatorPort();
        if (coordinatorPort == 0) {
            throw new InvalidConfigException("coordinatorAddr", config.coordinatorAddr(),
                    "needs a fixed port, since every rank must find rank 0 there");
        }
        String bindSpec = config.option(NettyTransport.BIND_OPTION).orElse(null);
        InetAddress bind;
        if (config.rank() == 0) {
            // Rank 0 listens where the others look for it, unless told to listen more widely.
            bind = bindSpec == null ? coordinator : bindAddress(bindSpec, coordinator);
        } else {
            bind = bindSpec == null ? routeTo(coordinator, coordinatorPort) : bindAddress(bindSpec, coordinator);
        }
        String advertised = (bind.isAnyLocalAddress() ? routeTo(coordinator, coordinatorPort) : bind).getHostAddress();
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
        String epollText = config.option(NettyTransport.EPOLL_OPTION).orElse("auto").trim();
        boolean epoll = switch (epollText) {
            case "auto" -> io.netty.channel.epoll.Epoll.isAvailable();
            case "true" -> {
                io.netty.channel.epoll.Epoll.ensureAvailability();
                yield true;
            }
            case "false" -> false;
            default -> throw new InvalidConfigException("option " + NettyTransport.EPOLL_OPTION, epollText,
                    "must be auto, true or false");
        };
        long pauseReading = config.positiveIntOption(NettyTransport.RECEIVE_BUFFER_OPTION,
                NettyTransport.DEFAULT_RECEIVE_BUFFER_BYTES);
        if (pauseReading < MIN_RECEIVE_BUFFER_BYTES) {
            throw new InvalidConfigException("option " + NettyTransport.RECEIVE_BUFFER_OPTION, pauseReading,
                    "must be at least " + MIN_RECEIVE_BUFFER_BYTES + " bytes");
        }
        Duration handshake = config.timeout().compareTo(MAX_HANDSHAKE_TIME) < 0 ? config.timeout() : MAX_HANDSHAKE_TIME;
        return new NettySettings(jobId, secret, coordinator, coordinatorPort, bind, advertised, port, ioThreads, epoll,
                pauseReading, handshake);
    }

    private static byte[] secret(DistributedConfig config, Map<String, String> environment) {
        String inline = config.option(NettyTransport.SECRET_OPTION).orElse(null);
        if (inline != null) {
            return nonEmpty(NettyTransport.SECRET_OPTION, inline.getBytes(StandardCharsets.UTF_8));
        }
        String file = config.option(NettyTransport.SECRET_FILE_OPTION).orElse(null);
        if (file != null) {
            try {
                String text = Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
                return nonEmpty(NettyTransport.SECRET_FILE_OPTION, text.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new InvalidConfigException("option " + NettyTransport.SECRET_FILE_OPTION, file,
                        "must name a readable file (" + e + ")");
            }
        }
        String fromEnvironment = environment.get(NettyTransport.SECRET_ENV);
        if (fromEnvironment != null) {
            return nonEmpty(NettyTransport.SECRET_ENV, fromEnvironment.getBytes(StandardCharsets.UTF_8));
        }
        return null;
    }

    private static byte[] nonEmpty(String source, byte[] secret) {
        if (secret.length == 0) {
            throw new InvalidConfigException(source, "(empty)", "must not be empty; leave it unset to run without a secret");
        }
        return secret;
    }

    private static InetAddress resolve(String field, String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new InvalidConfigException(field, host, "must be an address or a host name that resolves");
        }
    }

    /**
     * The local address to listen on, from an address or host name, a network interface's name
     * ({@code eth0}: its first address of the coordinator's family) or a CIDR block
     * ({@code 10.0.0.0/24}: the first local address inside it).
     */
    static InetAddress bindAddress(String spec, InetAddress coordinator) {
        String text = spec.trim();
        try {
            int slash = text.indexOf('/');
            if (slash > 0) {
                return inBlock(text, slash);
            }
            NetworkInterface named = NetworkInterface.getByName(text);
            if (named != null) {
                List<InetAddress> addresses = Collections.list(named.getInetAddresses());
                // The coordinator's family first, and never a link-local address when there is
                // another: its %scope means nothing to other hosts.
                addresses.sort(java.util.Comparator
                        .comparing((InetAddress address) -> (address instanceof Inet4Address) != (coordinator instanceof Inet4Address))
                        .thenComparing(InetAddress::isLinkLocalAddress));
                if (!addresses.isEmpty()) {
                    return addresses.get(0);
                }
                throw new InvalidConfigException("option " + NettyTransport.BIND_OPTION, spec,
                        "names an interface with no address");
            }
        } catch (SocketException e) {
            throw new InvalidConfigException("option " + NettyTransport.BIND_OPTION, spec,
                    "could not be looked up among the network interfaces (" + e.getMessage() + ")");
        }
        return resolve("option " + NettyTransport.BIND_OPTION, text.startsWith("[") && text.endsWith("]")
                ? text.substring(1, text.length() - 1) : text);
    }

    private static InetAddress inBlock(String cidr, int slash) throws SocketException {
        InetAddress network = resolve("option " + NettyTransport.BIND_OPTION, cidr.substring(0, slash));
        int prefix;
        try {
            prefix = Integer.parseInt(cidr.substring(slash + 1));
        } catch (NumberFormatException e) {
            prefix = -1;
        }
        byte[] block = network.getAddress();
        if (prefix < 0 || prefix > block.length * 8) {
            throw new InvalidConfigException("option " + NettyTransport.BIND_OPTION, cidr, "has a bad prefix length");
        }
        List<InetAddress> seen = new ArrayList<>();
        for (NetworkInterface candidate : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InterfaceAddress address : candidate.getInterfaceAddresses()) {
                byte[] bytes = address.getAddress().getAddress();
                seen.add(address.getAddress());
                if (bytes.length == block.length && samePrefix(bytes, block, prefix)) {
                    return address.getAddress();
                }
            }
        }
        throw new InvalidConfigException("option " + NettyTransport.BIND_OPTION, cidr,
                "matches none of this host's addresses " + seen);
    }

    static boolean samePrefix(byte[] a, byte[] b, int bits) {
        for (int i = 0; i < bits; i++) {
            int mask = 0x80 >>> (i % 8);
            if ((a[i / 8] & mask) != (b[i / 8] & mask)) {
                return false;
            }
        }
        return true;
    }

    /** The local address this host would use to reach {@code target}; no packet is sent. */
    private static InetAddress routeTo(InetAddress target, int port) {
        if (target.isLoopbackAddress()) {
            return target;
        }
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(target, port);
            InetAddress local = probe.getLocalAddress();
            if (local != null && !local.isAnyLocalAddress()) {
                return local;
            }
        } catch (IOException e) {
            // fall through to the error below
        }
        throw new InvalidConfigException("option " + NettyTransport.BIND_OPTION, "(unset)",
                "must be given: no local address routes to the coordinator " + target.getHostAddress());
    }
}
