package io.ringstar.spi;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.NetworkOptions;
import java.util.List;

/**
 * Service-provider interface through which {@link io.ringstar.Transports#open} finds transports.
 * A transport module lists its implementation in
 * {@code META-INF/services/io.ringstar.spi.TransportProvider}.
 */
public interface TransportProvider {

    /** The name that {@link DistributedConfig#transport()} selects this transport by, for example {@code "netty"}. */
    String name();

    /**
     * Opens this rank's transport; blocks until the group has formed or the configuration's
     * timeout has passed. The caller owns the returned transport and must close it.
     */
    Transport open(DistributedConfig config);

    /**
     * The options this transport reads, each declared once (a network transport includes
     * {@link NetworkOptions#ALL}); none by default. {@link io.ringstar.Transports#open} refuses an
     * option of a configuration that neither these nor {@link io.ringstar.config.AggregatorOptions#ALL}
     * declare, and {@link io.ringstar.config.ConfigSources} reads the flags and environment variables
     * these declare.
     */
    default List<ConfigOption<?>> options() {
        return List.of();
    }
}
