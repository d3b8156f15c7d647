package io.ringstar.spi;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;

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
}
