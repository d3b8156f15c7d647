package io.ringstar;

import io.ringstar.spi.TransportProvider;
import java.util.ServiceLoader;
import java.util.SortedMap;
import java.util.TreeMap;

/** Opens transports by name, as found on the class path through {@link TransportProvider}. */
public final class Transports {
    private Transports() {
    }

    /**
     * Opens the transport named by {@code config.transport()} for {@code config.rank()}. Blocks until
     * the group has formed, at most {@code config.timeout()}. The caller owns the transport.
     *
     * @throws InvalidConfigException if no transport of that name is on the class path; the
     *     message lists the ones that are
     */
    public static Transport open(DistributedConfig config) {
        SortedMap<String, TransportProvider> providers = available();
        TransportProvider provider = providers.get(config.transport());
        if (provider == null) {
            throw new InvalidConfigException("transport", config.transport(),
                    "no such transport on the class path; available: " + String.join(", ", providers.keySet()));
        }
        return provider.open(config);
    }

    /**
     * A view of {@code owner} whose {@code close()} does nothing, for handing one transport to
     * several aggregators in turn (an aggregator closes the transport it is given). Every other
     * call goes to {@code owner}, which the caller still owns and closes.
     */
    public static Transport borrowed(Transport owner) {
        return new BorrowedTransport(owner);
    }

    /** The transports on the class path, by name. */
    public static SortedMap<String, TransportProvider> available() {
        SortedMap<String, TransportProvider> providers = new TreeMap<>();
        for (TransportProvider provider : ServiceLoader.load(TransportProvider.class)) {
            providers.putIfAbsent(provider.name(), provider);
        }
        return providers;
    }
}
