package io.ringstar.transport.netty;

import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.ConfigOption;
import io.ringstar.spi.BoundTransport;
import io.ringstar.spi.TransportProvider;
import java.util.List;

/**
 * Registers {@link NettyTransport} with {@link io.ringstar.Transports#open} and
 * {@link io.ringstar.Transports#bind} as {@code "netty"}.
 */
public final class NettyTransportProvider implements TransportProvider {
    @Override
    public String name() {
        return NettyTransport.NAME;
    }

    @Override
    public Transport open(DistributedConfig config) {
        return new NettyTransport(config);
    }

    /**
     * Binds this rank's listener and returns at once (see {@link NettyTransport}, "Two-step open");
     * rank 0 may be given port 0.
     */
    @Override
    public BoundTransport bind(DistributedConfig config) {
        return NettyTransport.bind(config);
    }

    /** The network options ({@link io.ringstar.config.NetworkOptions#ALL}), {@code ioThreads} and the TLS files. */
    @Override
    public List<ConfigOption<?>> options() {
        return NettySettings.OPTIONS;
    }
}
