package io.ringstar.config;

import io.ringstar.InvalidConfigException;
import io.ringstar.spi.PeerTransport;
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
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

/**
 * The options that every network transport reads the same way: the job id, the shared secret,
 * the address and port a rank listens on, and its receive buffer, each declared once as a
 * {@link ConfigOption} ({@link #ALL}, which every network transport publishes with its own). For
 * transport implementations; every method only reads the
 * configuration, the environment and the host's interfaces, sends nothing, and reports a bad value
 * as an {@link InvalidConfigException} naming the option.
 */
public final class NetworkOptions {
    /** Option: the shared secret itself (UTF-8). */
    public static final String SECRET_OPTION = "secret";
    /** Option: a file holding the shared secret (UTF-8, surrounding white space ignored). */
    public static final String SECRET_FILE_OPTION = "secretFile";
    /** Environment variable read for the secret when neither option is set. */
    public static final String SECRET_ENV = "RINGSTAR_SECRET";
    /** Option: where a rank listens (see {@link #bindAddress}). */
    public static final String BIND_OPTION = "bind";
    /** Option: the port a rank other than 0 listens on; 0 picks a free one. */
    public static final String PORT_OPTION = "port";
    /** Option: the job's id; ranks of different jobs refuse each other. */
    public static final String JOB_ID_OPTION = "jobId";
    public static final String DEFAULT_JOB_ID = "ringstar";
    /** Option: bytes from one peer that may wait for {@code recv} before reading from it stops. */
    public static final String RECEIVE_BUFFER_OPTION = "receiveBufferBytes";
    public static final int DEFAULT_RECEIVE_BUFFER_BYTES = 64 << 20;
    /** The smallest receive buffer accepted: a few frames' worth of small messages. */
    public static final int MIN_RECEIVE_BUFFER_BYTES = 64 << 10;
    /** Option: whether a waiting call spins first ({@link PeerTransport#start}). */
    public static final String WAIT_SPIN_OPTION = "waitSpin";
    /** Option: whether peers on this host talk through shared memory: auto, on or off. */
    public static final String SHARED_MEMORY_OPTION = "sharedMemory";
    /** {@value #SHARED_MEMORY_OPTION} value: shared memory where a peer can open this rank's ring, else the network. */
    public static final String SHARED_MEMORY_AUTO = "auto";
    /** {@value #SHARED_MEMORY_OPTION} value: every peer through shared memory, or the open fails. */
    public static final String SHARED_MEMORY_ON = "on";
    /** {@value #SHARED_MEMORY_OPTION} value: the network path only. */
    public static final String SHARED_MEMORY_OFF = "off";
    /** Option: bytes of the ring from this rank to each peer on its host. */
    public static final String SHARED_MEMORY_BYTES_OPTION = "sharedMemoryBytes";
    public static final int DEFAULT_SHARED_MEMORY_BYTES = 4 << 20;
    /** Option: the directory the ring files are made in. */
    public static final String SHARED_MEMORY_DIRECTORY_OPTION = "sharedMemoryDirectory";
    public static final String DEFAULT_SHARED_MEMORY_DIRECTORY = "/dev/shm";

    /** Declares {@value #JOB_ID_OPTION}. */
    public static final ConfigOption<String> JOB_ID = ConfigOption.builder(JOB_ID_OPTION, OptionParser.text()
                    .and(id -> id.getBytes(StandardCharsets.UTF_8).length <= 256, "at most 256 bytes of UTF-8"))
            .defaultValue(DEFAULT_JOB_ID).description("the job's id; ranks of different jobs refuse each other")
            .build();
    /** Declares {@value #SECRET_OPTION}; it has no flag, so that the secret never shows in a process list. */
    public static final ConfigOption<String> SECRET = ConfigOption.builder(SECRET_OPTION, OptionParser.text())
            .sensitive().description("the shared secret itself (UTF-8); else " + SECRET_FILE_OPTION + ", else the"
                    + " environment variable " + SECRET_ENV).build();
    /** Declares {@value #SECRET_FILE_OPTION}. */
    public static final ConfigOption<Path> SECRET_FILE = ConfigOption.builder(SECRET_FILE_OPTION, OptionParser.path())
            .flag("secret-file").environmentVariable("RINGSTAR_SECRET_FILE")
            .description("a file holding the shared secret (UTF-8, surrounding white space ignored)").build();
    /** Declares {@value #BIND_OPTION}; {@link #bindAddress} reads its value. */
    public static final ConfigOption<String> BIND = ConfigOption.builder(BIND_OPTION, OptionParser.text()
                    .and(text -> !text.isBlank(), "not only white space").named("ADDRESS"))
            .defaultText("rank 0: the coordinator's address; others: the local address that routes to it")
            .description("where this rank listens: an address, an interface name (eth0) or a CIDR block"
                    + " (10.0.0.0/24)").build();
    /** Declares {@value #PORT_OPTION}. */
    public static final ConfigOption<Integer> PORT = ConfigOption.builder(PORT_OPTION, OptionParser.intIn(0, 65535))
            .defaultValue(0).defaultText("0 (any free port)")
            .description("the port a rank other than 0 listens on").build();
    /** Declares {@value #RECEIVE_BUFFER_OPTION}. */
    public static final ConfigOption<Integer> RECEIVE_BUFFER_BYTES = ConfigOption.builder(RECEIVE_BUFFER_OPTION,
                    OptionParser.byteSize(MIN_RECEIVE_BUFFER_BYTES, Integer.MAX_VALUE))
            .defaultValue(DEFAULT_RECEIVE_BUFFER_BYTES).defaultText("64M")
            .description("bytes from one peer that may wait for a receive before reading from it pauses (twice"
                    + " that while this rank sends to it)").build();
    /** Declares {@value #WAIT_SPIN_OPTION}: whether a waiting call spins before it yields. */
    public static final ConfigOption<String> WAIT_SPIN = ConfigOption.builder(WAIT_SPIN_OPTION,
                    OptionParser.choice(PeerTransport.WAIT_SPIN_AUTO, PeerTransport.WAIT_SPIN_ON,
                            PeerTransport.WAIT_SPIN_OFF))
            .defaultValue(PeerTransport.WAIT_SPIN_AUTO)
            .description("whether a waiting call spins 50 us before it yields: auto (unless this host runs more of "
                    + "the group's ranks, and Aeron drivers moving their UDP, than the JVM has cores), on (ranks "
                    + "pinned to cores of their own) or off").build();
    /** Declares {@value #SHARED_MEMORY_OPTION}. */
    public static final ConfigOption<String> SHARED_MEMORY = ConfigOption.builder(SHARED_MEMORY_OPTION,
                    OptionParser.choice(SHARED_MEMORY_AUTO, SHARED_MEMORY_ON, SHARED_MEMORY_OFF))
            .flag("shared-memory").environmentVariable("RINGSTAR_SHARED_MEMORY").defaultValue(SHARED_MEMORY_AUTO)
            .description("peers on this host through a ring in shared memory: auto (where the peer can open this"
                    + " rank's ring file, else the network path, with one warning), on (every peer, or the open"
                    + " fails) or off (the network path only)").build();
    /** Declares {@value #SHARED_MEMORY_BYTES_OPTION}. */
    public static final ConfigOption<Integer> SHARED_MEMORY_BYTES = ConfigOption.builder(SHARED_MEMORY_BYTES_OPTION,
                    OptionParser.byteSize(64 << 10, 1 << 30).and(size -> Integer.bitCount(size) == 1,
                            "a power of two"))
            .defaultValue(DEFAULT_SHARED_MEMORY_BYTES).defaultText("4M")
            .description("bytes of the shared-memory ring from this rank to each peer on its host (one file each in"
                    + " " + DEFAULT_SHARED_MEMORY_DIRECTORY + ")").build();
    /** Declares {@value #SHARED_MEMORY_DIRECTORY_OPTION}. */
    public static final ConfigOption<Path> SHARED_MEMORY_DIRECTORY = ConfigOption.builder(
                    SHARED_MEMORY_DIRECTORY_OPTION, OptionParser.path())
            .defaultValue(Path.of(DEFAULT_SHARED_MEMORY_DIRECTORY)).defaultText(DEFAULT_SHARED_MEMORY_DIRECTORY)
            .description("where the shared-memory ring files are made: a memory file system both ranks of a pair"
                    + " see").build();
    /** Every option above: each network transport publishes them with its own. */
    public static final List<ConfigOption<?>> ALL = List.of(JOB_ID, SECRET, SECRET_FILE, BIND, PORT,
            RECEIVE_BUFFER_BYTES, WAIT_SPIN, SHARED_MEMORY, SHARED_MEMORY_BYTES, SHARED_MEMORY_DIRECTORY);

    /** Set once a transport of this process has warned that its job has no secret. */
    private static final AtomicBoolean WARNED_UNAUTHENTICATED = new AtomicBoolean();

    private NetworkOptions() {
    }

    /**
     * Logs at WARNING, once per process however many transports it opens, that the job runs without
     * a shared secret (or other authentication, such as the Netty transport's TLS), so anyone who
     * can reach its ports can join it and send it tensors.
     *
     * @param otherRemedy the transport's own way to authenticate its ranks, named in the advice
     *     ({@code "mutual TLS (--tls-cert, --tls-key, --tls-trust)"}), or null if it has none
     * @return true if this call logged the warning, false if an earlier call had
     */
    public static boolean warnUnauthenticated(System.Logger log, String transport, int rank, String jobId,
            String otherRemedy) {
        return warnUnauthenticated(WARNED_UNAUTHENTICATED, log, transport, rank, jobId, otherRemedy);
    }

    /** As the public method, with {@code warned} in place of the process's flag. */
    static boolean warnUnauthenticated(AtomicBoolean warned, System.Logger log, String transport, int rank,
            String jobId, String otherRemedy) {
        if (!warned.compareAndSet(false, true)) {
            return false;
        }
        log.log(System.Logger.Level.WARNING, "rank " + rank + " of job '" + jobId + "' (" + transport + "): no shared"
                + " secret is set, so this job is UNAUTHENTICATED: anyone who can reach its ports can join it or send"
                + " it data. To fix it, give every rank the same secret: a file with --secret-file PATH (or "
                + SECRET_FILE.environmentVariable().orElseThrow() + ", or option " + SECRET_FILE_OPTION + "), or the"
                + " secret itself in " + SECRET_ENV + (otherRemedy == null ? "." : "; or give every rank " + otherRemedy
                + "."));
        return true;
    }

    /**
     * The job id from option {@value #JOB_ID_OPTION}, else {@value #DEFAULT_JOB_ID}.
     *
     * @param option looks an option up by name, {@code null} when it is not set
     * @throws InvalidConfigException unless it is 1 to 256 bytes of UTF-8
     */
    public static String jobId(UnaryOperator<String> option) {
        String value = option.apply(JOB_ID_OPTION);
        return value == null ? DEFAULT_JOB_ID : JOB_ID.parse(value, ConfigOption.FROM_CONFIGURATION);
    }

    /**
     * The shared secret from option {@value #SECRET_OPTION}, else the file named by
     * {@value #SECRET_FILE_OPTION}, else the environment variable {@value #SECRET_ENV}; {@code null}
     * when none is set.
     *
     * @param option looks an option up by name, {@code null} when it is not set
     * @throws InvalidConfigException if the secret is empty or its file cannot be read
     */
    public static byte[] secret(UnaryOperator<String> option, Map<String, String> environment) {
        String inline = option.apply(SECRET_OPTION);
        if (inline != null) {
            return nonEmpty(SECRET_OPTION, inline.getBytes(StandardCharsets.UTF_8));
        }
        String file = option.apply(SECRET_FILE_OPTION);
        if (file != null) {
            try {
                String text = Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
                return nonEmpty(SECRET_FILE_OPTION, text.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new InvalidConfigException("option " + SECRET_FILE_OPTION, file,
                        "must name a readable file (" + e + ")");
            }
        }
        String fromEnvironment = environment.get(SECRET_ENV);
        return fromEnvironment == null ? null : nonEmpty(SECRET_ENV, fromEnvironment.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] nonEmpty(String source, byte[] secret) {
        if (secret.length == 0) {
            throw new InvalidConfigException(source, "(empty)",
                    "must not be empty; leave it unset to run without a secret");
        }
        return secret;
    }

    /**
     * Looks up an address or a host name; an IPv6 address may come in brackets.
     *
     * @param field what the value is, for the error message ({@code "option bind"})
     */
    public static InetAddress resolve(String field, String host) {
        String text = host.trim();
        try {
            return InetAddress.getByName(text.startsWith("[") && text.endsWith("]")
                    ? text.substring(1, text.length() - 1) : text);
        } catch (UnknownHostException e) {
            throw new InvalidConfigException(field, host, "must be an address or a host name that resolves");
        }
    }

    /**
     * The local address to listen on, from option {@value #BIND_OPTION}'s value: an address or host
     * name, a network interface's name ({@code eth0}: its first address of the coordinator's family,
     * not a link-local one when it has another) or a CIDR block ({@code 10.0.0.0/24}: the first
     * local address inside it).
     */
    public static InetAddress bindAddress(String spec, InetAddress coordinator) {
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
                addresses.sort(Comparator
                        .comparing((InetAddress address) -> (address instanceof Inet4Address)
                                != (coordinator instanceof Inet4Address))
                        .thenComparing(InetAddress::isLinkLocalAddress));
                if (!addresses.isEmpty()) {
                    return addresses.get(0);
                }
                throw new InvalidConfigException("option " + BIND_OPTION, spec, "names an interface with no address");
            }
        } catch (SocketException e) {
            throw new InvalidConfigException("option " + BIND_OPTION, spec,
                    "could not be looked up among the network interfaces (" + e.getMessage() + ")");
        }
        return resolve("option " + BIND_OPTION, text);
    }

    private static InetAddress inBlock(String cidr, int slash) throws SocketException {
        InetAddress network = resolve("option " + BIND_OPTION, cidr.substring(0, slash));
        int prefix;
        try {
            prefix = Integer.parseInt(cidr.substring(slash + 1));
        } catch (NumberFormatException e) {
            prefix = -1;
        }
        byte[] block = network.getAddress();
        if (prefix < 0 || prefix > block.length * 8) {
            throw new InvalidConfigException("option " + BIND_OPTION, cidr, "has a bad prefix length");
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
        throw new InvalidConfigException("option " + BIND_OPTION, cidr,
                "matches none of this host's addresses " + seen);
    }

    /** Whether the first {@code bits} bits of two addresses of one family are equal. */
    static boolean samePrefix(byte[] a, byte[] b, int bits) {
        for (int i = 0; i < bits; i++) {
            int mask = 0x80 >>> (i % 8);
            if ((a[i / 8] & mask) != (b[i / 8] & mask)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The local address this host would use to reach {@code target} (the route's source address);
     * no packet is sent.
     *
     * @throws InvalidConfigException naming option {@value #BIND_OPTION} if no local address routes there
     */
    public static InetAddress routeTo(InetAddress target, int port) {
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
            // reported below
        }
        throw new InvalidConfigException("option " + BIND_OPTION, "(unset)",
                "must be given: no local address routes to the coordinator " + target.getHostAddress());
    }
}
