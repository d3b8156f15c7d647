package io.ringstar.transport.aeron;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.ConfigOption;
import io.ringstar.spi.TransportProvider;
import java.util.List;

/** Registers {@link AeronTransport} with {@link io.ringstar.Transports#open} as {@code "aeron"}. */
public final class AeronTransportProvider implements TransportProvider {
    @Override
    public String name() {
        return AeronTransport.NAME;
    }

    @Override
    public Transport open(DistributedConfig config) {
        return new AeronTransport(config);
    }

    /** The network options ({@link io.ringstar.config.NetworkOptions#ALL}) and the {@code aeron.*} ones. */
    @Override
    public List<ConfigOption<?>> options() {
        return AeronSettings.OPTIONS;
    }
}
