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
 * @param coordinatorPort rank 0's port; 0 only when this rank is the whole group
 * @param bind where this rank listens: the {@code bind} option's address, else rank 0 the
 *     coordinator's address and every other rank the local address that routes to it
 * @param bindSpec the {@code bind} option as given, or null
 * @param port this rank's listening port (0: any free port)
 * @param receiveBufferBytes bytes from one peer that may wait to be received
 */
public record NetworkSettings(String jobId, byte[] secret, InetAddress coordinator, int coordinatorPort,
        InetAddress bind, String bindSpec, int port, long receiveBufferBytes) {

    /**
     * Reads the settings from {@code config}, the secret also from {@code environment}
     * ({@value NetworkOptions#SECRET_ENV}).
     *
     * @throws InvalidConfigException if a value is not allowed, or rank 0's port is 0 in a group of
     *     more than one rank
     */
    public static NetworkSettings from(DistributedConfig config, Map<String, String> environment) {
        UnaryOperator<String> option = name -> config.option(name).orElse(null);
        String jobId = NetworkOptions.jobId(option);
        byte[] secret = NetworkOptions.secret(option, environment);
        InetAddress coordinator = NetworkOptions.resolve("coordinatorAddr", config.coordinatorHost());
        int coordinatorPort = config.coordinatorPort();
        if (coordinatorPort == 0 && config.worldSize() > 1) {
            throw new InvalidConfigException("coordinatorAddr", config.coordinatorAddr(),
                    "needs a fixed port, since every rank must find rank 0 there");
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
