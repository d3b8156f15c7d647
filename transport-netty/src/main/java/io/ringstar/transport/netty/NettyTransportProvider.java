package io.ringstar.transport.netty;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.ConfigOption;
import io.ringstar.spi.TransportProvider;
import java.util.List;

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

    /** The network options ({@link io.ringstar.config.NetworkOptions#ALL}), {@code ioThreads} and the TLS files. */
    @Override
    public List<ConfigOption<?>> options() {
        return NettySettings.OPTIONS;
    }
}
