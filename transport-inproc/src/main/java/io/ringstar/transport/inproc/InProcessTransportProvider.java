package io.ringstar.transport.inproc;

import io.ringstar.CollectiveException;
import io.ringstar.CollectiveTimeoutException;
import io.ringstar.DistributedConfig;
import io.ringstar.InvalidConfigException;
import io.ringstar.Transport;
import io.ringstar.config.ConfigOption;
import io.ringstar.spi.TransportProvider;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Opens {@link InProcessTransport}s by name {@value #NAME}: ranks of one JVM that give the same
 * coordinator address join one group. {@link #open} waits until all ranks have joined, at most the
 * configuration's timeout. The group is forgotten once all its ranks have closed, so the address
 * can be used again.
 */
public final class InProcessTransportProvider implements TransportProvider {
    public static final String NAME = InProcessTransport.NAME;

    private static final ConcurrentHashMap<String, InProcessGroup> GROUPS = new ConcurrentHashMap<>();

    @Override
    public String name() {
        return NAME;
    }

    /**
     * None: ranks of one JVM need no address, secret or buffer settings, so a configuration for
     * this transport may carry only core's options ({@link io.ringstar.config.AggregatorOptions#ALL}).
     */
    @Override
    public List<ConfigOption<?>> options() {
        return List.of();
    }

    @Override
    public Transport open(DistributedConfig config) {
        String address = config.coordinatorAddr();
        InProcessGroup group = GROUPS.computeIfAbsent(address,
                key -> new InProcessGroup(config.worldSize(), config.timeout()));
        if (group.worldSize != config.worldSize()) {
            throw new InvalidConfigException("worldSize", config.worldSize(), "the in-process group at " + address
                    + " was opened with world size " + group.worldSize);
        }
        InProcessTransport transport = new InProcessTransport(group, config.rank(),
                () -> GROUPS.remove(address, group));
        if (!group.join(config.rank(), transport)) {
            throw new InvalidConfigException("rank", config.rank(),
                    "another transport of this JVM has already joined the in-process group at " + address
                            + " as this rank");
        }
        List<Integer> missing;
        try {
            missing = group.awaitAllJoined(config.timeout());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            transport.close();
            throw new CollectiveException("open", config.rank(), CollectiveException.NO_RANK,
                    "interrupted while waiting for the group at " + address + " to form", e);
        }
        if (!missing.isEmpty()) {
            transport.close();
            throw new CollectiveTimeoutException("open", config.rank(), missing.get(0), "ranks " + missing
                    + " did not join the in-process group at " + address + " within " + config.timeout());
        }
        return transport;
    }
}
