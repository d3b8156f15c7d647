package io.ringstar.transport.netty;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.spi.TransportProvider;

/** Registers {@link NettyTransport} with {@link io.ringstar.Transports#open} as {@code "netty"}. */
public final class NettyTransportProvider implements TransportProvider {
    @Override
    public String name() {
        return NettyTransport.NAME;
    }

    @Override
    public Transport open(DistributedConfig config) {
        return new NettyTransport(config);
    }
}
