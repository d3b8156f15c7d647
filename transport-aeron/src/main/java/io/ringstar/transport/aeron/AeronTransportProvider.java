package io.ringstar.transport.aeron;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.ConfigOption;
import io.ringstar.spi.BoundTransport;
import io.ringstar.spi.TransportProvider;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Registers {@link AeronTransport} with {@link io.ringstar.Transports#open} and
 * {@link io.ringstar.Transports#bind} as {@code "aeron"}.
 */
public final class AeronTransportProvider implements TransportProvider {
    @Override
    public String name() {
        return AeronTransport.NAME;
    }

    @Override
    public Transport open(DistributedConfig config) {
        return new AeronTransport(config);
    }

    /**
     * Starts the media driver, binds this rank's endpoints and returns at once (see
     * {@link AeronTransport}, "Two-step open"); rank 0 may be given port 0.
     */
    @Override
    public BoundTransport bind(DistributedConfig config) {
        return AeronTransport.bind(config, UnaryOperator.identity());
    }

    /** The network options ({@link io.ringstar.config.NetworkOptions#ALL}) and the {@code aeron.*} ones. */
    @Override
    public List<ConfigOption<?>> options() {
        return AeronSettings.OPTIONS;
    }
}
