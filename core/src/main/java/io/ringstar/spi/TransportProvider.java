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
     * The first step of a two-step open: binds this rank's endpoint and returns without waiting for
     * the group; {@link BoundTransport#join()} is the second step. Unlike {@link #open}, rank 0 of a
     * group may be given port 0 in {@link DistributedConfig#coordinatorAddr()} (any free port, which
     * {@link BoundTransport#address()} then reports); the other ranks are given rank 0's reported
     * address as usual. The caller owns the result and must join or close it.
     *
     * <p>By default, for a transport without an endpoint to bind (the in-process one), nothing is
     * bound: the address is the configuration's coordinator address and joining is {@link #open}.
     * A network transport overrides it.
     *
     * @throws io.ringstar.InvalidConfigException as {@link #open} does, and before anything is bound
     * @throws io.ringstar.CollectiveException if the endpoint cannot be bound
     */
    default BoundTransport bind(DistributedConfig config) {
        return BoundTransport.of(config.rank(), config.coordinatorAddr(), () -> open(config), () -> { });
    }

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
