package io.ringstar.spi;

import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.config.NetworkOptions;
import java.net.InetAddress;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The settings every network transport reads the same way, from the options that
 * {@link NetworkOptions} declares: the job id, the secret, where rank 0 listens, where this rank
 * listens, its port, and how many bytes a peer may send ahead. A transport's own settings class
 * reads these first, then its own options; this is their one home.
 *
 * @param jobId the job's id; ranks of different jobs refuse each other
 * @param secret the shared secret, or null when the job runs without one
 * @param coordinator rank 0's address
 * @param coordinatorPort rank 0's port; 0 only when this rank is the whole group, or is rank 0 of a
 *     two-step open ({@link #forBind}), which then listens on any free port
 * @param bind where this rank listens: the {@code bind} option's address, else rank 0 the
 *     coordinator's address and every other rank the local address that routes to it
 * @param bindSpec the {@code bind} option as given, or null
 * @param port this rank's listening port (0: any free port)
 * @param receiveBufferBytes bytes from one peer that may wait to be received
 */
public record NetworkSettings(String jobId, byte[] secret, InetAddress coordinator, int coordinatorPort,
        InetAddress bind, String bindSpec, int port, long receiveBufferBytes) {

    /**
     * Reads the settings for {@link TransportProvider#open} from {@code config}, the secret also
     * from {@code environment} ({@value NetworkOptions#SECRET_ENV}).
     *
     * @throws InvalidConfigException if a value is not allowed, or rank 0's port is 0 in a group of
     *     more than one rank ({@link #fixedPortRequired})
     */
    public static NetworkSettings from(DistributedConfig config, Map<String, String> environment) {
        return read(config, environment, false);
    }

    /**
     * Reads the settings for the first step of a two-step open ({@link TransportProvider#bind}):
     * as {@link #from}, except that rank 0 may be given port 0 and then listens on any free port,
     * which it reports. Every other rank still needs rank 0's real port, where it joins rank 0.
     *
     * @throws InvalidConfigException if a value is not allowed, or a rank other than 0 is given port 0
     */
    public static NetworkSettings forBind(DistributedConfig config, Map<String, String> environment) {
        return read(config, environment, true);
    }

    /**
     * The refusal of port 0 in {@code config}'s coordinator address where a rank must know rank 0's
     * port before it starts: every rank of {@link TransportProvider#open}, and the ranks other than
     * 0 of a two-step open. It names the way to a free port: rank 0 binds first.
     */
    public static InvalidConfigException fixedPortRequired(DistributedConfig config) {
        return new InvalidConfigException("coordinatorAddr", config.coordinatorAddr(),
                "needs a fixed port, since every rank must find rank 0 there"
                        + (config.rank() == 0 ? "; for any free port, bind rank 0 first with Transports.bind and"
                                + " give the other ranks the address it reports"
                                : "; give this rank the address rank 0 reported after Transports.bind"));
    }

    /** {@code host:port}, an IPv6 address in brackets: an address as {@link DistributedConfig} reads it. */
    public static String hostPort(InetAddress host, int port) {
        String text = host.getHostAddress();
        return text.indexOf(':') >= 0 ? "[" + text + "]:" + port : text + ":" + port;
    }

    private static NetworkSettings read(DistributedConfig config, Map<String, String> environment,
            boolean rankZeroBindsFirst) {
        UnaryOperator<String> option = name -> config.option(name).orElse(null);
        String jobId = NetworkOptions.jobId(option);
        byte[] secret = NetworkOptions.secret(option, environment);
        InetAddress coordinator = NetworkOptions.resolve("coordinatorAddr", config.coordinatorHost());
        int coordinatorPort = config.coordinatorPort();
        if (coordinatorPort == 0 && config.worldSize() > 1 && !(rankZeroBindsFirst && config.rank() == 0)) {
            throw fixedPortRequired(config);
        }
        String bindSpec = NetworkOptions.BIND.ifSet(config).orElse(null);
        InetAddress bind;
        if (bindSpec != null) {
            bind = NetworkOptions.bindAddress(bindSpec, coordinator);
        } else {
            // Rank 0 listens where the others look for it; the others, where rank 0 can reach them.
            bind = config.rank() == 0 ? coordinator : NetworkOptions.routeTo(coordinator, coordinatorPort);
        }
        return new NetworkSettings(jobId, secret, coordinator, coordinatorPort, bind, bindSpec,
                NetworkOptions.PORT.value(config), NetworkOptions.RECEIVE_BUFFER_BYTES.value(config));
    }
}
