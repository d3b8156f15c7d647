package io.ringstar;

import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.ConfigOption;
import io.ringstar.config.OptionCatalog;
import io.ringstar.internal.engine.BorrowedTransport;
import io.ringstar.internal.launch.RankScope;
import io.ringstar.spi.BoundTransport;
import io.ringstar.spi.TransportProvider;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Opens transports by name, as found on the class path through {@link TransportProvider}, and
 * lists the options each one takes.
 */
public final class Transports {
    /** The artifact of each transport ringstar ships, for the error that a missing one gives. */
    private static final Map<String, String> SHIPPED = Map.of("inproc", "ringstar-transport-inproc",
            "netty", "ringstar-transport-netty", "aeron", "ringstar-transport-aeron");

    private Transports() {
    }

    /**
     * Opens the transport named by {@code config.transport()} for {@code config.rank()}. Blocks until
     * the group has formed, at most {@code config.timeout()}. The caller owns the transport. A
     * network transport needs rank 0's real port in the coordinator address, on every rank: for rank
     * 0 to take any free port, it binds first ({@link #bind}).
     *
     * <p>Every option of {@code config} must be one that the transport or core declares (see
     * {@link #options(String)}), so a misspelled option, or one of another transport, fails here
     * before anything starts instead of being silently ignored.
     *
     * @throws InvalidConfigException if no transport of that name is on the class path (the message
     *     lists the ones that are), or if the configuration holds an option it does not take (the
     *     message lists the ones it takes), or the coordinator address has port 0 where the
     *     transport needs a fixed one
     */
    public static Transport open(DistributedConfig config) {
        TransportProvider provider = provider(config.transport());
        OptionCatalog.ofClassPath().requireKnown(config, options(provider));
        // A rank started inside a host process (SparkRanks) joins the endpoint bound for it, if any.
        return RankScope.open(config, () -> provider.open(config));
    }

    /**
     * The first step of a two-step open ({@link TransportProvider#bind}): binds the endpoint of the
     * transport named by {@code config.transport()} for {@code config.rank()} and returns at once,
     * with the address bound; {@link BoundTransport#join()} forms the group. Rank 0 may be given port
     * 0 (any free port) and then publishes {@link BoundTransport#address()} to the other ranks, which
     * open with it as their coordinator address. The caller owns the result and must join or close it.
     * Checks the options as {@link #open} does.
     *
     * @throws InvalidConfigException as {@link #open} does
     */
    public static BoundTransport bind(DistributedConfig config) {
        TransportProvider provider = provider(config.transport());
        OptionCatalog.ofClassPath().requireKnown(config, options(provider));
        return provider.bind(config);
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

    /**
     * Every option a configuration for {@code transport} may carry: {@link AggregatorOptions#ALL},
     * then the transport's own ({@link TransportProvider#options()}), each name once. For help
     * texts, one line per option: {@code Transports.options("netty").forEach(o -> out.println(o.help()))}.
     *
     * @throws InvalidConfigException if no transport of that name is on the class path
     */
    public static List<ConfigOption<?>> options(String transport) {
        return options(provider(transport));
    }

    /**
     * Every option core or any transport on the class path declares, each name once, core's first:
     * what a command line may name before it knows the transport.
     */
    public static List<ConfigOption<?>> options() {
        return OptionCatalog.ofClassPath().all();
    }

    /**
     * For a transport's own constructor, so that it refuses what {@link #open} refuses when it is
     * called directly: an option of {@code config} that neither {@code transportOptions} nor
     * {@link AggregatorOptions#ALL} declare.
     *
     * @throws InvalidConfigException naming the option and listing the known ones
     */
    public static void requireKnownOptions(DistributedConfig config, List<ConfigOption<?>> transportOptions) {
        OptionCatalog.ofClassPath().requireKnown(config, OptionCatalog.withCore(transportOptions));
    }

    private static TransportProvider provider(String transport) {
        SortedMap<String, TransportProvider> providers = available();
        TransportProvider provider = providers.get(transport);
        if (provider == null) {
            String artifact = SHIPPED.get(transport);
            throw new InvalidConfigException("transport", transport, "no such transport on the class path"
                    + (artifact == null ? "" : " (add the artifact io.ringstar:" + artifact + ")")
                    + "; available: " + (providers.isEmpty() ? "none" : String.join(", ", providers.keySet())));
        }
        return provider;
    }

    private static List<ConfigOption<?>> options(TransportProvider provider) {
        return OptionCatalog.withCore(provider.options());
    }
}
