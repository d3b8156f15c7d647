package io.ringstar.internal.launch;

import io.ringstar.CollectiveException;
import io.ringstar.DistributedConfig;
import io.ringstar.Transport;
import io.ringstar.config.AggregatorOptions;
import io.ringstar.config.ConfigOption;
import io.ringstar.spi.BoundTransport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * One rank's life inside a host process that started it (a Spark task): the endpoint a launcher
 * bound for it before the coordinator's address was known, and every transport the rank's code
 * opens through {@link io.ringstar.Transports#open}. The rank's code only sees its
 * {@link DistributedConfig}; when it opens a transport with it, {@link #open} joins the bound
 * endpoint instead of binding a second one (which would find the port taken), and when the task
 * ends, {@link #close()} closes whatever the code left open, so that its peers fail at once
 * instead of waiting for their timeout, and a next job finds no port or thread left behind.
 *
 * <p>A scope is found by the configuration's transport, coordinator address and rank: the
 * coordinator's port was bound for this job on this host, so no other job has the same key.
 */
public final class RankScope implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RankScope.class.getName());
    private static final ConcurrentMap<Key, RankScope> ACTIVE = new ConcurrentHashMap<>();
    /** Core's options: an aggregator reads them, the transport does not, so they may differ from the bound one's. */
    private static final Set<String> CORE_OPTIONS = AggregatorOptions.ALL.stream().map(ConfigOption::name)
            .collect(Collectors.toUnmodifiableSet());

    private final Key key;
    private final DistributedConfig config;
    /** Guarded by {@code this}: the endpoint, until the first open takes it. */
    private BoundTransport bound;
    /** Guarded by {@code this}. */
    private final List<Transport> opened = new ArrayList<>();
    /** Guarded by {@code this}. */
    private boolean closed;

    private RankScope(Key key, DistributedConfig config, BoundTransport bound) {
        this.key = key;
        this.config = config;
        this.bound = bound;
    }

    /**
     * Starts the scope of the rank {@code config} describes, holding {@code bound} (or null) for its
     * first open. The caller owns the scope and closes it when the rank's task ends.
     *
     * @throws IllegalStateException if this process already runs that rank of that group
     */
    public static RankScope enter(DistributedConfig config, BoundTransport bound) {
        Key key = Key.of(config);
        RankScope scope = new RankScope(key, config, bound);
        if (ACTIVE.putIfAbsent(key, scope) != null) {
            throw new IllegalStateException("rank " + config.rank() + " of the group at " + config.coordinatorAddr()
                    + " already runs in this process");
        }
        return scope;
    }

    /**
     * Opens a transport for {@code config}: inside a scope for its rank, by joining the scope's bound
     * endpoint when its settings are the endpoint's (else by {@code opener}), and recorded for
     * {@link #close()}; outside any scope, by {@code opener} alone.
     */
    public static Transport open(DistributedConfig config, Supplier<Transport> opener) {
        RankScope scope = ACTIVE.get(Key.of(config));
        return scope == null ? opener.get() : scope.openInScope(config, opener);
    }

    private Transport openInScope(DistributedConfig wanted, Supplier<Transport> opener) {
        BoundTransport endpoint;
        synchronized (this) {
            requireOpen();
            endpoint = bound;
            bound = null;
        }
        Transport transport;
        if (endpoint != null && sameEndpoint(wanted)) {
            transport = endpoint.join();
        } else {
            if (endpoint != null) {
                // Other transport settings than the endpoint was bound with: free its port and open anew.
                endpoint.close();
            }
            transport = opener.get();
        }
        synchronized (this) {
            if (!closed) {
                opened.add(transport);
                return transport;
            }
        }
        transport.close();
        throw ended();
    }

    private boolean sameEndpoint(DistributedConfig wanted) {
        return wanted.worldSize() == config.worldSize() && wanted.timeout().equals(config.timeout())
                && transportOptions(wanted).equals(transportOptions(config));
    }

    private static Map<String, String> transportOptions(DistributedConfig config) {
        Map<String, String> options = new TreeMap<>(config.options());
        options.keySet().removeAll(CORE_OPTIONS);
        return options;
    }

    private void requireOpen() {
        if (closed) {
            throw ended();
        }
    }

    private CollectiveException ended() {
        return new CollectiveException("open", config.rank(), CollectiveException.NO_RANK,
                "the task that ran this rank has ended; its transports are closed");
    }

    /**
     * Ends the scope: releases the endpoint if no open took it, and closes every transport opened
     * in it that its code did not close (closing twice is harmless). Never throws.
     */
    @Override
    public void close() {
        BoundTransport endpoint;
        List<Transport> toClose;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            endpoint = bound;
            bound = null;
            toClose = new ArrayList<>(opened);
            opened.clear();
        }
        ACTIVE.remove(key, this);
        if (endpoint != null) {
            endpoint.close();
        }
        for (Transport transport : toClose) {
            try {
                transport.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "rank " + config.rank() + ": closing a transport its task left"
                        + " open failed", e);
            }
        }
    }

    private record Key(String transport, String coordinatorAddr, int rank) {
        static Key of(DistributedConfig config) {
            return new Key(config.transport(), config.coordinatorAddr(), config.rank());
        }
    }
}
